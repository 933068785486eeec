package discover

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// The mocks are go-nvml's own DGX servers (pkg/nvml/mock/dgxa100 and
// dgxh100): their GPU tables, devices, MIG mode and GPU and compute
// instance management are used as they are. What the servers leave unset
// (a moq mock panics when an unset function is called) is added here:
//   - GetNumGpuCores, from NVIDIA's datasheets (A100 SXM4: 6912 FP32 cores
//     on 108 SMs; H100 SXM5: 16896 on 132), so discovery derives the SM
//     count the way it does on real hardware;
//   - GetGpuInstanceRemainingCapacity: what the instances created so far
//     leave of the profile's instance count and of the card's slices;
//   - GetGpuInstanceById, GetMaxMigDeviceCount and GetMigDeviceHandleByIndex
//     (with MIG device handles answering their UUID and instance IDs), so
//     MIG instances are created and found as on real hardware;
//   - UUIDs derived from the kind, the index and a seed, so a mock node's
//     GPUs keep their UUIDs across restarts (the servers draw random ones).

// mockKind is one DGX mock: its server, GPU table and CUDA core count.
type mockKind struct {
	gpu   gpus.Config
	cores int
	new   func(...gpus.Config) *server.Server
}

var mockKinds = map[string]mockKind{
	"dgxa100": {gpus.A100_SXM4_40GB, 6912, dgxa100.NewWithGPUs},
	"dgxh100": {gpus.H100_SXM5_80GB, 16896, dgxh100.NewWithGPUs},
}

// MockKinds lists the kinds Mock accepts, sorted.
func MockKinds() []string {
	var out []string
	for k := range mockKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MaxMockCount bounds the devices a mock may have.
const MaxMockCount = 64

// MockOption changes a mock.
type MockOption func(*mockConfig)

type mockConfig struct {
	mig  map[int]bool
	seed string
}

// WithMIG starts the mock with MIG mode on for these device indices.
func WithMIG(indices ...int) MockOption {
	return func(c *mockConfig) {
		for _, i := range indices {
			c.mig[i] = true
		}
	}
}

// WithSeed changes the mock's UUIDs (the node daemon passes its node name,
// so two mock nodes on one host have different GPUs).
func WithSeed(seed string) MockOption { return func(c *mockConfig) { c.seed = seed } }

// Mock is a source of count mock devices of a DGX kind: "dgxa100" (A100
// SXM4 40GB) or "dgxh100" (H100 SXM5 80GB), as the node daemon's
// --gpu-mock and --gpu-mock-count flags ask for. The mock keeps its state
// (MIG instances) for as long as the source lives.
func Mock(kind string, count int, opts ...MockOption) (*Source, error) {
	k, ok := mockKinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown GPU mock %q (valid: %s)", kind, strings.Join(MockKinds(), ", "))
	}
	if count < 1 || count > MaxMockCount {
		return nil, fmt.Errorf("GPU mock count must be between 1 and %d, got %d", MaxMockCount, count)
	}
	c := mockConfig{mig: map[int]bool{}}
	for _, o := range opts {
		o(&c)
	}
	for i := range c.mig {
		if i < 0 || i >= count {
			return nil, fmt.Errorf("GPU mock MIG device %d is not among devices 0-%d", i, count-1)
		}
	}
	srv := k.new(gpus.Multiple(count, k.gpu)...)
	for i, nd := range srv.Devices {
		d := nd.(*server.Device)
		d.UUID = mockUUID("GPU", c.seed, kind, i)
		if c.mig[i] {
			d.MigMode = nvml.DEVICE_MIG_ENABLE
		}
		fillDevice(d, k.cores)
	}
	return From(srv, "mock "+kind), nil
}

// mockUUID is a version-8 (custom) UUID from a hash of its parts, with
// prefix ("GPU", "MIG") in front as NVML writes them.
func mockUUID(prefix string, parts ...any) string {
	b := sha256.Sum256([]byte(fmt.Sprint(append([]any{"corral gpu mock"}, parts...)...)))
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// fillDevice sets what the server leaves unset on one device.
func fillDevice(d *server.Device, cores int) {
	d.GetNumGpuCoresFunc = func() (int, nvml.Return) { return cores, nvml.SUCCESS }
	d.GetGpuInstanceRemainingCapacityFunc = func(info *nvml.GpuInstanceProfileInfo) (int, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		if d.MigMode != nvml.DEVICE_MIG_ENABLE {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		same, used := 0, 0
		for gi := range d.GpuInstances {
			p := d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
			used += int(p.SliceCount)
			if gi.Info.ProfileId == info.Id {
				same++
			}
		}
		left := int(info.InstanceCount) - same
		if info.SliceCount > 0 {
			left = min(left, (totalSlices(d)-used)/int(info.SliceCount))
		}
		return max(left, 0), nvml.SUCCESS
	}
	// Creating refuses what the card cannot hold, as NVML does, and gives
	// the new GPU instance a lookup of its compute instances by ID.
	create := d.CreateGpuInstanceFunc
	d.CreateGpuInstanceFunc = func(info *nvml.GpuInstanceProfileInfo) (nvml.GpuInstance, nvml.Return) {
		if left, ret := d.GetGpuInstanceRemainingCapacity(info); ret != nvml.SUCCESS || left < 1 {
			return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		gi, ret := create(info)
		if ret == nvml.SUCCESS {
			fillInstance(gi.(*server.GpuInstance))
		}
		return gi, ret
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		for gi := range d.GpuInstances {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return totalSlices(d), nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		pairs := migPairs(d)
		if n < 0 || n >= len(pairs) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migDevice(d, pairs[n]), nvml.SUCCESS
	}
}

// totalSlices is the card's compute slices: the largest profile's.
func totalSlices(d *server.Device) int {
	n := 0
	for _, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
		n = max(n, int(p.SliceCount))
	}
	return n
}

// migPair is one compute instance in one GPU instance: a MIG device.
type migPair struct {
	gi, ci uint32
	gpuMB  uint64
}

// migPairs lists the device's MIG devices in instance order, as NVML
// numbers them.
func migPairs(d *server.Device) []migPair {
	d.RLock()
	var gis []*server.GpuInstance
	for gi := range d.GpuInstances {
		gis = append(gis, gi)
	}
	d.RUnlock()
	var out []migPair
	for _, gi := range gis {
		mb := d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)].MemorySizeMB
		gi.RLock()
		for ci := range gi.ComputeInstances {
			out = append(out, migPair{gi: gi.Info.Id, ci: ci.Info.Id, gpuMB: mb})
		}
		gi.RUnlock()
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].gi != out[b].gi {
			return out[a].gi < out[b].gi
		}
		return out[a].ci < out[b].ci
	})
	return out
}

// migDevice is the handle of one MIG device of d.
func migDevice(d *server.Device, p migPair) nvml.Device {
	uuid := mockUUID("MIG", d.UUID, p.gi, p.ci)
	return &mock.Device{
		GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return int(p.gi), nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return int(p.ci), nvml.SUCCESS },
		IsMigDeviceHandleFunc:    func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) {
			return d, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			b := p.gpuMB << 20
			return nvml.Memory{Total: b, Free: b}, nvml.SUCCESS
		},
	}
}

// fillInstance sets what the server leaves unset on a GPU instance.
func fillInstance(gi *server.GpuInstance) {
	gi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
		gi.RLock()
		defer gi.RUnlock()
		for ci := range gi.ComputeInstances {
			if int(ci.Info.Id) == id {
				return ci, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
}
