package discover

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
)

// Why not go-nvml's dgxa100/dgxh100 servers themselves: they live in
// package mock/server, which imports github.com/google/uuid, a module this
// repository does not require. The servers are thin: the GPU tables
// (mock/gpus: names, memory, MIG profiles) and the moq mocks (mock.Device,
// mock.Interface) carry everything, and both are used here as they are.
// What the servers fill in and this file fills in alike: Init, Shutdown,
// the device count and handles, UUID, name, memory, compute capability,
// MIG mode and profile info. What neither server sets and this file adds:
//   - GetNumGpuCores, from NVIDIA's datasheets (A100 SXM4: 6912 FP32 cores
//     on 108 SMs; H100 SXM5: 16896 on 132), so discovery derives the SM
//     count the way it does on real hardware;
//   - GetGpuInstanceRemainingCapacity: a mock never has instances, so it
//     is the profile's instance count while MIG is on;
//   - Extensions().LookupSymbol, which answers that every symbol exists;
//   - UUIDs derived from the kind, the index and a seed, so a mock node's
//     GPUs keep their UUIDs across restarts (the servers draw random ones).

// mockKind is one DGX mock: the GPU table and its CUDA core count.
type mockKind struct {
	gpu   gpus.Config
	cores int
}

var mockKinds = map[string]mockKind{
	"dgxa100": {gpus.A100_SXM4_40GB, 6912},
	"dgxh100": {gpus.H100_SXM5_80GB, 16896},
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
// --gpu-mock and --gpu-mock-count flags ask for.
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
	devs := make([]nvml.Device, count)
	for i := range devs {
		devs[i] = newMockDevice(k, i, mockUUID(c.seed, kind, i), c.mig[i])
	}
	lib := &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devs) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], nvml.SUCCESS
		},
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
		},
	}
	return From(lib, "mock "+kind), nil
}

// mockUUID is a version-8 (custom) UUID from a hash of seed, kind and index.
func mockUUID(seed, kind string, index int) string {
	b := sha256.Sum256([]byte(fmt.Sprintf("corral gpu mock\x00%s\x00%s\x00%d", seed, kind, index)))
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func newMockDevice(k mockKind, index int, uuid string, migOn bool) *mock.Device {
	var mu sync.Mutex
	mode := nvml.DEVICE_MIG_DISABLE
	if migOn {
		mode = nvml.DEVICE_MIG_ENABLE
	}
	profiles := k.gpu.MIGProfiles.GpuInstanceProfiles
	total := k.gpu.MemoryMB * 1024 * 1024
	return &mock.Device{
		GetIndexFunc: func() (int, nvml.Return) { return index, nvml.SUCCESS },
		GetUUIDFunc:  func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetNameFunc:  func() (string, nvml.Return) { return k.gpu.Name, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Free: total}, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) {
			return k.gpu.CudaMajor, k.gpu.CudaMinor, nvml.SUCCESS
		},
		GetNumGpuCoresFunc: func() (int, nvml.Return) { return k.cores, nvml.SUCCESS },
		GetMigModeFunc: func() (int, int, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			return mode, mode, nvml.SUCCESS
		},
		SetMigModeFunc: func(m int) (nvml.Return, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			mode = m
			return nvml.SUCCESS, nvml.SUCCESS
		},
		GetGpuInstanceProfileInfoFunc: func(id int) (nvml.GpuInstanceProfileInfo, nvml.Return) {
			if id < 0 || id >= nvml.GPU_INSTANCE_PROFILE_COUNT {
				return nvml.GpuInstanceProfileInfo{}, nvml.ERROR_INVALID_ARGUMENT
			}
			p, ok := profiles[id]
			if !ok {
				return nvml.GpuInstanceProfileInfo{}, nvml.ERROR_NOT_SUPPORTED
			}
			return p, nvml.SUCCESS
		},
		GetGpuInstanceRemainingCapacityFunc: func(info *nvml.GpuInstanceProfileInfo) (int, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			if mode != nvml.DEVICE_MIG_ENABLE {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return int(info.InstanceCount), nvml.SUCCESS
		},
	}
}
