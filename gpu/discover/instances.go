package discover

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// MIGInstance is one MIG device made for one share: a GPU instance of the
// share's profile with one compute instance using all of it.
type MIGInstance struct {
	Device int    `json:"device"` // the parent GPU's index
	GI     int    `json:"gi"`     // GPU instance ID on the parent
	CI     int    `json:"ci"`     // compute instance ID in the GPU instance
	UUID   string `json:"uuid"`   // "MIG-…", what CUDA_VISIBLE_DEVICES names
}

// CreateMIG makes a GPU instance of the profile (gpu.MIGProfile.ID) on
// device index, fills it with one compute instance and returns the MIG
// device. The device must be in MIG mode; nothing is left behind when a
// step fails.
func (s *Source) CreateMIG(index, profileID int) (MIGInstance, error) {
	var out MIGInstance
	err := s.with(func() error {
		h, ret := s.lib.DeviceGetHandleByIndex(index)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: %v", index, ret)
		}
		info, ret := h.GetGpuInstanceProfileInfo(profileID)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: MIG profile %d: %v", index, profileID, ret)
		}
		gi, ret := h.CreateGpuInstance(&info)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: creating a GPU instance of profile %d: %v", index, profileID, ret)
		}
		giInfo, ret := gi.GetInfo()
		if ret != nvml.SUCCESS {
			gi.Destroy()
			return fmt.Errorf("device %d: reading the new GPU instance: %v", index, ret)
		}
		ciInfo, err := fullComputeProfile(gi, int(info.SliceCount))
		if err != nil {
			gi.Destroy()
			return fmt.Errorf("device %d: %v", index, err)
		}
		ci, ret := gi.CreateComputeInstance(&ciInfo)
		if ret != nvml.SUCCESS {
			gi.Destroy()
			return fmt.Errorf("device %d: creating a compute instance: %v", index, ret)
		}
		cinfo, ret := ci.GetInfo()
		if ret != nvml.SUCCESS {
			ci.Destroy()
			gi.Destroy()
			return fmt.Errorf("device %d: reading the new compute instance: %v", index, ret)
		}
		out = MIGInstance{Device: index, GI: int(giInfo.Id), CI: int(cinfo.Id)}
		if out.UUID, err = migUUID(h, out.GI, out.CI); err != nil {
			ci.Destroy()
			gi.Destroy()
			return fmt.Errorf("device %d: %v", index, err)
		}
		return nil
	})
	return out, err
}

// DestroyMIG removes a MIG device, the compute instance first. An instance
// that is already gone is not an error, so a retried cleanup is safe.
func (s *Source) DestroyMIG(m MIGInstance) error {
	return s.with(func() error {
		h, ret := s.lib.DeviceGetHandleByIndex(m.Device)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: %v", m.Device, ret)
		}
		gi, ret := h.GetGpuInstanceById(m.GI)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			return nil
		}
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: GPU instance %d: %v", m.Device, m.GI, ret)
		}
		if ci, ret := gi.GetComputeInstanceById(m.CI); ret == nvml.SUCCESS {
			if ret := ci.Destroy(); ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_FOUND {
				return fmt.Errorf("device %d: destroying compute instance %d/%d: %v", m.Device, m.GI, m.CI, ret)
			}
		}
		if ret := gi.Destroy(); ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_FOUND {
			return fmt.Errorf("device %d: destroying GPU instance %d: %v", m.Device, m.GI, ret)
		}
		return nil
	})
}

// with runs f between Init and Shutdown (NVML counts them, so nested and
// concurrent users are fine).
func (s *Source) with(f func() error) error {
	if ret := s.lib.Init(); ret != nvml.SUCCESS {
		return fmt.Errorf("gpu: %s: %v", s.what, ret)
	}
	defer s.lib.Shutdown()
	return f()
}

// fullComputeProfile is the compute instance profile that uses every
// slice of a GPU instance of that many slices.
func fullComputeProfile(gi nvml.GpuInstance, slices int) (nvml.ComputeInstanceProfileInfo, error) {
	for id := 0; id < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; id++ {
		info, ret := gi.GetComputeInstanceProfileInfo(id, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret == nvml.SUCCESS && int(info.SliceCount) == slices {
			return info, nil
		}
	}
	return nvml.ComputeInstanceProfileInfo{}, fmt.Errorf("no compute instance profile of %d slices", slices)
}

// migUUID finds the MIG device of a GPU and compute instance.
func migUUID(h nvml.Device, gi, ci int) (string, error) {
	n, ret := h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return "", fmt.Errorf("counting MIG devices: %v", ret)
	}
	for k := 0; k < n; k++ {
		md, ret := h.GetMigDeviceHandleByIndex(k)
		if ret != nvml.SUCCESS {
			continue
		}
		g, r1 := md.GetGpuInstanceId()
		c, r2 := md.GetComputeInstanceId()
		if r1 != nvml.SUCCESS || r2 != nvml.SUCCESS || g != gi || c != ci {
			continue
		}
		uuid, ret := md.GetUUID()
		if ret != nvml.SUCCESS {
			return "", fmt.Errorf("MIG device %d/%d: reading its UUID: %v", gi, ci, ret)
		}
		return uuid, nil
	}
	return "", errors.New("the new MIG device is not listed")
}
