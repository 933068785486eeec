package gpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EnvFor is the environment a job gets for its shares on one node
// (KEY=VALUE, in a fixed order; nil without shares):
//
//	CORRAL_FGPU          fGPU held on this node, decimal ("0.5")
//	CORRAL_GPU_MEM       GPU memory the shares entitle the job to, in MiB
//	SLURM_JOB_GPUS       NVML indices of the devices ("0,3")
//	SLURM_GPUS_ON_NODE   how many devices
//	CUDA_VISIBLE_DEVICES device UUIDs (MIG instance UUIDs for MIG shares),
//	                     which stay right inside a container that renumbers
//	NVIDIA_VISIBLE_DEVICES the same list, for the NVIDIA container hook
//	CUDA_MPS_PINNED_DEVICE_MEM_LIMIT  for MPS fractions: "<ordinal>=<MiB>M"
//	                     per device, the ordinal being the device's place in
//	                     CUDA_VISIBLE_DEVICES (what CUDA numbers it inside
//	                     the job)
//	CUDA_MPS_ACTIVE_THREAD_PERCENTAGE  the SM share, only when the job's
//	                     one device is an MPS fraction: the variable caps
//	                     the whole process on every device, so a job that
//	                     also holds whole devices does not get it
//
// Shares are listed in device order. The node adds what only it knows
// (CUDA_MPS_PIPE_DIRECTORY). A share naming an unknown device, a device
// twice, an amount outside (0, perGPU] or a MIG share without its instance
// is an error.
func EnvFor(assign []Share, devices []Device, perGPU Hundredths) ([]string, error) {
	if len(assign) == 0 {
		return nil, nil
	}
	if err := CheckPerGPU(perGPU); err != nil {
		return nil, fmt.Errorf("gpu env: fgpu_per_gpu %v", err)
	}
	shares := append([]Share(nil), assign...)
	sort.Slice(shares, func(i, j int) bool { return shares[i].Device < shares[j].Device })

	var (
		total   Hundredths
		memMiB  int64
		indices []string
		visible []string
		pinned  []string
		mps     []Limits
	)
	for i, s := range shares {
		if i > 0 && shares[i-1].Device == s.Device {
			return nil, fmt.Errorf("gpu env: device %d is assigned twice", s.Device)
		}
		d, ok := Lookup(devices, s.Device)
		if !ok {
			return nil, fmt.Errorf("gpu env: device %d is not on this node", s.Device)
		}
		if s.Amount <= 0 || s.Amount > perGPU {
			return nil, fmt.Errorf("gpu env: share of %s fGPU on device %d is outside (0, %s]", s.Amount, s.Device, perGPU)
		}
		if d.MIGEnabled != (s.MIG != nil) {
			return nil, fmt.Errorf("gpu env: device %d has MIG mode %s but its share %s MIG profile", s.Device, onOff(d.MIGEnabled), hasNot(s.MIG != nil))
		}
		total += s.Amount
		indices = append(indices, strconv.Itoa(d.Index))
		switch {
		case s.MIG != nil:
			if s.MIGDevice == "" {
				return nil, fmt.Errorf("gpu env: device %d needs a MIG %s instance and none was created", s.Device, s.MIG.Name)
			}
			visible = append(visible, s.MIGDevice)
			memMiB += s.MIG.MemoryBytes / MiB
		case s.Amount == perGPU:
			visible = append(visible, d.UUID)
			memMiB += d.MemoryBytes / MiB
		default: // an MPS fraction
			l := LimitsOf(d, s.Amount, perGPU)
			pinned = append(pinned, fmt.Sprintf("%d=%dM", i, l.MemMiB))
			mps = append(mps, l)
			visible = append(visible, d.UUID)
			memMiB += l.MemMiB
		}
	}
	env := []string{
		"CORRAL_FGPU=" + total.String(),
		"CORRAL_GPU_MEM=" + strconv.FormatInt(memMiB, 10),
		"SLURM_JOB_GPUS=" + strings.Join(indices, ","),
		"SLURM_GPUS_ON_NODE=" + strconv.Itoa(len(shares)),
		"CUDA_VISIBLE_DEVICES=" + strings.Join(visible, ","),
		"NVIDIA_VISIBLE_DEVICES=" + strings.Join(visible, ","),
	}
	if len(pinned) > 0 {
		env = append(env, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="+strings.Join(pinned, ","))
	}
	if len(mps) == 1 && len(shares) == 1 {
		env = append(env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="+strconv.Itoa(mps[0].SMPercent))
	}
	return env, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func hasNot(b bool) string {
	if b {
		return "names a"
	}
	return "names no"
}
