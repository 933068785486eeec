package discover

import (
	"fmt"
	"log"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/corral-hpc/corral/gpu"
)

// Source is where devices are read from: the NVML library or a mock.
type Source struct {
	lib  nvml.Interface
	what string // for messages: "NVML (libnvidia-ml.so.1)", "mock dgxa100"
	// Logf gets the one line said when NVML is unavailable; log.Printf
	// when nil.
	Logf func(format string, args ...any)
}

var _ fmt.Stringer = (*Source)(nil)

// defaultLibrary is the name the NVIDIA driver installs NVML under.
const defaultLibrary = "libnvidia-ml.so.1"

// NVML reads devices through the system's libnvidia-ml.so.1.
func NVML() *Source { return NVMLAt(defaultLibrary) }

// NVMLAt reads devices through the NVML library at path (a file name the
// dynamic loader searches for, or an absolute path).
func NVMLAt(path string) *Source {
	return From(nvml.New(nvml.WithLibraryPath(path)), "NVML ("+path+")")
}

// From reads devices through any nvml.Interface (a real library, a mock);
// what names it in messages.
func From(lib nvml.Interface, what string) *Source { return &Source{lib: lib, what: what} }

// String names the source.
func (s *Source) String() string { return s.what }

// Devices initializes NVML, reads every device and shuts NVML down again.
// When NVML cannot be initialized (no library, no driver) the node simply
// has no GPUs: no devices, no error, one log line. A device that cannot be
// read is left out and named in the error, which is one line; the devices
// that could be read are returned with it.
func (s *Source) Devices() ([]gpu.Device, error) {
	if ret := s.lib.Init(); ret != nvml.SUCCESS {
		s.logf("gpu: %s unavailable (%v): this node has no GPUs", s.what, ret)
		return nil, nil
	}
	defer s.lib.Shutdown()
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("gpu: %s: counting devices: %v", s.what, ret)
	}
	// nvmlDeviceGetNumGpuCores is recent (R520); calling a symbol an older
	// driver lacks would crash, so ask first.
	cores := s.lib.Extensions().LookupSymbol("nvmlDeviceGetNumGpuCores") == nil
	var devs []gpu.Device
	var bad []string
	for i := 0; i < n; i++ {
		d, err := readDevice(s.lib, i, cores)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		devs = append(devs, d)
	}
	if len(bad) > 0 {
		return devs, fmt.Errorf("gpu: %s: %s", s.what, strings.Join(bad, "; "))
	}
	return devs, nil
}

func (s *Source) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// readDevice reads one device. UUID, name and memory are required; the SM
// count and MIG details are best effort, as drivers and boards differ.
func readDevice(lib nvml.Interface, index int, cores bool) (gpu.Device, error) {
	h, ret := lib.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("device %d: %v", index, ret)
	}
	d := gpu.Device{Index: index}
	if d.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("device %d: reading its UUID: %v", index, ret)
	}
	if d.Name, ret = h.GetName(); ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("device %d: reading its name: %v", index, ret)
	}
	mem, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return gpu.Device{}, fmt.Errorf("device %d: reading its memory: %v", index, ret)
	}
	d.MemoryBytes = int64(mem.Total)
	// The minor number names /dev/nvidia<minor>; NVML numbers devices in
	// the same PCI order, so the index stands in if it cannot say.
	d.Minor = index
	if m, ret := h.GetMinorNumber(); ret == nvml.SUCCESS {
		d.Minor = m
	}
	if cores {
		d.SMs = smCount(h)
	}
	readMIG(h, &d)
	return d, nil
}

// smCount is CUDA cores / cores per SM. NVML has no SM count for a whole
// GPU (nvmlDeviceGetAttributes answers only for MIG devices), but it has
// the core count, and the cores per SM follow from the compute capability.
func smCount(h nvml.Device) int {
	n, ret := h.GetNumGpuCores()
	if ret != nvml.SUCCESS || n <= 0 {
		return 0
	}
	major, minor, ret := h.GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return 0
	}
	per := coresPerSM(major, minor)
	if per == 0 {
		return 0
	}
	return n / per
}

// coresPerSM is the FP32 cores per SM of a compute capability, from the
// CUDA Programming Guide's table (and helper_cuda.h's _ConvertSMVer2Cores);
// 0 for capabilities it does not list.
func coresPerSM(major, minor int) int {
	switch {
	case major == 6 && minor == 0: // GP100
		return 64
	case major == 6: // GP10x
		return 128
	case major == 7: // Volta, Turing
		return 64
	case major == 8 && minor == 0: // GA100
		return 64
	case major == 8: // GA10x, AD10x
		return 128
	case major == 9, major == 10, major == 12: // Hopper, Blackwell
		return 128
	}
	return 0
}

// readMIG fills the MIG fields. A device that answers GetMigMode is
// MIG-capable; its profiles are listed whether MIG is on or off, and how
// many more instances each can have is asked only while MIG is on.
func readMIG(h nvml.Device, d *gpu.Device) {
	current, _, ret := h.GetMigMode()
	if ret != nvml.SUCCESS {
		return
	}
	d.MIGCapable = true
	d.MIGEnabled = current == nvml.DEVICE_MIG_ENABLE
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, ret := h.GetGpuInstanceProfileInfo(id)
		if ret != nvml.SUCCESS || info.SliceCount == 0 {
			continue
		}
		variant := profileVariant(id)
		bytes := int64(info.MemorySizeMB) * gpu.MiB
		eighths := gpu.MIGMemEighths(bytes, d.MemoryBytes)
		p := gpu.MIGProfile{
			ID:          int(info.Id),
			Name:        gpu.MIGName(int(info.SliceCount), eighths, d.MemoryBytes, variant),
			Slices:      int(info.SliceCount),
			SMs:         int(info.MultiprocessorCount),
			MemoryBytes: bytes,
			MemEighths:  eighths,
			Variant:     variant,
			Max:         int(info.InstanceCount),
		}
		if d.MIGEnabled {
			if free, ret := h.GetGpuInstanceRemainingCapacity(&info); ret == nvml.SUCCESS {
				p.Free = free
			}
		}
		if variant == "" {
			d.MIGSlices = max(d.MIGSlices, p.Slices)
		}
		d.MIG = append(d.MIG, p)
	}
}

// profileVariant names the non-plain GPU instance profiles the way
// nvidia-smi suffixes them.
func profileVariant(id int) string {
	switch id {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		return "+gfx"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return "-me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return "+me.all"
	}
	return ""
}
