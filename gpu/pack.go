package gpu

import "sort"

// Share is the part of one device a job holds.
type Share struct {
	Device int `json:"device"` // Device.Index
	// Amount counts against the device, in hundredths; equal to the
	// device's worth (fgpu_per_gpu) for a whole device. On a MIG device it
	// is the profile's charge (MIGCharge), which may exceed the request.
	Amount Hundredths `json:"amount"`
	// MIG is the profile serving the share on a MIG-enabled device.
	MIG *MIGProfile `json:"mig,omitempty"`
	// MIGDevice is the UUID ("MIG-…") of the instance the node created
	// for the share; the node fills it in before building the job's
	// environment.
	MIGDevice string `json:"mig_device,omitempty"`
}

// Holding is a share a running job holds, with the uid it runs as.
type Holding struct {
	UID   uint32 `json:"uid"`
	Share Share  `json:"share"`
}

// DeviceFree is one device as the packer sees it.
type DeviceFree struct {
	Device Device
	Free   Hundredths // unallocated, out of the device's worth (fgpu_per_gpu)
	// MPSShared says some job holds an MPS fraction of the device (a share
	// smaller than the device, on a device not in MIG mode); MPSUser is
	// its uid. An MPS server serves one uid at a time per GPU, so
	// fractions of different users never share a device.
	MPSShared bool
	MPSUser   uint32
}

// Request is what a job asks for on one node.
type Request struct {
	Amount Hundredths // fGPU hundredths on this node
	UID    uint32     // the uid the job runs as (see DeviceFree.MPSShared)
}

// FreeOf works out each device's state from what running jobs hold.
// Holdings on devices not in devs are ignored (the device is gone); a
// device held beyond its worth is simply full.
func FreeOf(devs []Device, held []Holding, perGPU Hundredths) []DeviceFree {
	out := make([]DeviceFree, len(devs))
	at := make(map[int]int, len(devs))
	for i, d := range devs {
		out[i] = DeviceFree{Device: d, Free: perGPU}
		at[d.Index] = i
	}
	for _, h := range held {
		i, ok := at[h.Share.Device]
		if !ok {
			continue
		}
		f := &out[i]
		f.Free = max(f.Free-h.Share.Amount, 0)
		if !f.Device.MIGEnabled && h.Share.Amount < perGPU {
			f.MPSShared, f.MPSUser = true, h.UID
		}
	}
	return out
}

// Pack places a request on one node's devices. A request of at most one
// device's worth lands on one device, never split; a larger one takes
// whole devices plus at most one fraction. Fractions go best-fit: to a
// partly used device before an untouched one, then to the device with the
// least left over, then to the lowest index, so fragments stay usable and
// the same input always gives the same answer, whatever its order. Whole
// devices are the lowest-index untouched ones. ok is false when the request
// does not fit (or perGPU is not a valid fgpu_per_gpu); a zero request
// fits with no shares. Shares come back in device order.
func Pack(devs []DeviceFree, req Request, perGPU Hundredths) ([]Share, bool) {
	var out []Share
	ok := pack(devs, req, perGPU, func(s Share) { out = append(out, s) })
	if !ok {
		return nil, false
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out, true
}

// Fits reports whether Pack would place the request, without allocating.
func Fits(devs []DeviceFree, req Request, perGPU Hundredths) bool {
	return pack(devs, req, perGPU, nil)
}

// pack decides the placement and hands each share to emit (when not nil).
func pack(devs []DeviceFree, req Request, perGPU Hundredths, emit func(Share)) bool {
	if CheckPerGPU(perGPU) != nil || req.Amount < 0 {
		return false
	}
	if req.Amount == 0 {
		return true
	}
	whole, rem := int(req.Amount/perGPU), req.Amount%perGPU
	// The fraction first: it prefers a partly used device, so it takes an
	// untouched one only when nothing else holds it, and then the whole
	// shares need one free device more.
	frac := -1
	if rem > 0 {
		if frac = best(devs, rem, req.UID, perGPU); frac < 0 {
			return false
		}
	}
	// Whole shares: the lowest-index devices that can take one, found by
	// repeated scans (a node has a handful of GPUs), never the fraction's.
	var picks []int // appended to only when emitting: Fits allocates nothing
	last := -1
	for taken := 0; taken < whole; taken++ {
		next := -1
		for i, d := range devs {
			if i == frac || d.Device.Index <= last {
				continue
			}
			if _, ok := fit(d, perGPU, req.UID, perGPU); !ok {
				continue
			}
			if next < 0 || d.Device.Index < devs[next].Device.Index {
				next = i
			}
		}
		if next < 0 {
			return false
		}
		last = devs[next].Device.Index
		if emit != nil {
			picks = append(picks, next)
		}
	}
	if emit == nil {
		return true
	}
	if frac >= 0 {
		picks = append(picks, frac)
	}
	for i, at := range picks {
		amount := perGPU
		if i == whole {
			amount = rem
		}
		c, _ := fit(devs[at], amount, req.UID, perGPU)
		s := Share{Device: devs[at].Device.Index, Amount: c.charge}
		if c.mig {
			p := c.profile
			s.MIG = &p
		}
		emit(s)
	}
	return true
}

// best returns the position in devs of the device a share of amount (at
// most one device's worth) should go to, or -1 when none can take it.
func best(devs []DeviceFree, amount Hundredths, uid uint32, perGPU Hundredths) int {
	at := -1
	var atLeft Hundredths
	for i, d := range devs {
		c, ok := fit(d, amount, uid, perGPU)
		if !ok {
			continue
		}
		if at < 0 || better(d, d.Free-c.charge, devs[at], atLeft, perGPU) {
			at, atLeft = i, d.Free-c.charge
		}
	}
	return at
}

// better orders candidates: partly used before untouched, then least left
// over, then lowest index.
func better(a DeviceFree, aLeft Hundredths, b DeviceFree, bLeft Hundredths, perGPU Hundredths) bool {
	aWhole, bWhole := a.Free >= perGPU, b.Free >= perGPU
	if aWhole != bWhole {
		return bWhole
	}
	if aLeft != bLeft {
		return aLeft < bLeft
	}
	return a.Device.Index < b.Device.Index
}

// placement is what a share would be on one device.
type placement struct {
	charge  Hundredths // what it counts against the device
	mig     bool       // served by profile
	profile MIGProfile
}

// fit says whether amount can go on d, and how.
func fit(d DeviceFree, amount Hundredths, uid uint32, perGPU Hundredths) (placement, bool) {
	if d.Device.MIGEnabled {
		p, ok := MIGProfileFor(d.Device, amount, perGPU)
		if !ok {
			return placement{}, false
		}
		charge := MIGCharge(p, d.Device.MIGSlices, perGPU)
		return placement{charge: charge, mig: true, profile: p}, charge <= d.Free
	}
	if amount > d.Free {
		return placement{}, false
	}
	// A fraction joins an MPS-shared device only for the same user; a
	// whole device needs Free == perGPU, which no MPS sharer leaves.
	if amount < perGPU && d.MPSShared && d.MPSUser != uid {
		return placement{}, false
	}
	return placement{charge: amount}, true
}
