package gpu

import "fmt"

// Device is one physical GPU as discovery found it. It is plain data so a
// node can send it to the controller.
type Device struct {
	Index int `json:"index"` // NVML index on the node
	// Minor is the device's minor number: its node is /dev/nvidia<Minor>.
	Minor       int    `json:"minor"`
	UUID        string `json:"uuid"` // "GPU-…", stable across reboots
	Name        string `json:"name"`
	MemoryBytes int64  `json:"memory_bytes"`
	// SMs is the number of streaming multiprocessors; 0 when the driver
	// cannot say (it only informs: SM shares are given in percent).
	SMs int `json:"sms,omitempty"`
	// MIGCapable devices list their profiles even while MIG is off, so an
	// admin can see what turning it on would give.
	MIGCapable bool `json:"mig_capable,omitempty"`
	// MIGEnabled devices run work only inside MIG instances: every share
	// on them is served by a profile (see MIGProfileFor).
	MIGEnabled bool `json:"mig_enabled,omitempty"`
	// MIGSlices is the number of compute slices of the whole GPU (7 on
	// A100 and H100): the largest slice count of any profile.
	MIGSlices int          `json:"mig_slices,omitempty"`
	MIG       []MIGProfile `json:"mig,omitempty"`
}

// MIGProfile is one GPU-instance profile a MIG-capable device offers.
type MIGProfile struct {
	ID          int    `json:"id"`   // NVML GPU instance profile id
	Name        string `json:"name"` // as nvidia-smi names it: "1g.5gb", "1g.5gb+me"
	Slices      int    `json:"slices"`
	SMs         int    `json:"sms"`
	MemoryBytes int64  `json:"memory_bytes"`
	// MemEighths is the profile's memory in eighths of the device, rounded
	// up: the rule NVIDIA's profile names follow (A100-40GB 1g.5gb has
	// 4864 MiB, 1/8 of the card, hence "5gb").
	MemEighths int `json:"mem_eighths"`
	// Variant is "" for the plain compute profiles and names the others
	// ("+me" media extensions, "+gfx", "-me", "+me.all"); only plain
	// profiles are chosen for shares.
	Variant string `json:"variant,omitempty"`
	Max     int    `json:"max"`  // instances of this profile the GPU can hold
	Free    int    `json:"free"` // instances that can be created now; 0 while MIG is off
}

// MIGMemEighths is a profile's memory in eighths of the device's memory,
// rounded up (NVIDIA's naming rule). Both sizes are in bytes.
func MIGMemEighths(profileBytes, deviceBytes int64) int {
	if deviceBytes <= 0 || profileBytes <= 0 {
		return 0
	}
	return int((profileBytes*8 + deviceBytes - 1) / deviceBytes)
}

// MIGName is the nvidia-smi name of a profile: "<slices>g.<GB>gb" plus its
// variant, where GB is the eighths of the card times the card's size in
// whole GB (rounded up), rounded to the nearest GB. That is how a 4864 MiB
// instance on a 40 GiB A100 is called "1g.5gb" and a 40192 MiB one
// "7g.40gb".
func MIGName(slices, memEighths int, deviceBytes int64, variant string) string {
	cardGB := (deviceBytes + GiB - 1) / GiB
	gb := (2*int64(memEighths)*cardGB + 8) / 16
	return fmt.Sprintf("%dg.%dgb%s", slices, gb, variant)
}

// Lookup returns the device with this index.
func Lookup(devs []Device, index int) (Device, bool) {
	for _, d := range devs {
		if d.Index == index {
			return d, true
		}
	}
	return Device{}, false
}
