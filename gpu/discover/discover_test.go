package discover_test

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/gpu/discover"
)

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// MustDevices reads a source that must work, and lists nothing on the log.
func MustDevices(t testing.TB, src *discover.Source) []gpu.Device {
	t.Helper()
	src.Logf = func(f string, a ...any) { t.Errorf("unexpected log line: "+f, a...) }
	devs, err := src.Devices()
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

// MustMock is a mock source or a failed test.
func MustMock(t testing.TB, kind string, count int, opts ...discover.MockOption) *discover.Source {
	t.Helper()
	src, err := discover.Mock(kind, count, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func profileNames(d gpu.Device) []string {
	var out []string
	for _, p := range d.MIG {
		out = append(out, p.Name)
	}
	return out
}

func TestMockDGX(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		name     string
		memBytes int64
		sms      int
		profiles []string
	}{
		{"dgxa100", "Mock NVIDIA A100-SXM4-40GB", 40 * gpu.GiB, 108,
			[]string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", "1g.5gb+me", "1g.10gb"}},
		{"dgxh100", "NVIDIA H100 80GB HBM3", 80 * gpu.GiB, 132,
			[]string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.10gb+me", "1g.20gb"}},
	} {
		devs := MustDevices(t, MustMock(t, tc.kind, 8))
		if len(devs) != 8 {
			t.Fatalf("%s: %d devices, want 8", tc.kind, len(devs))
		}
		seen := map[string]bool{}
		for i, d := range devs {
			if d.Index != i || d.Name != tc.name || d.MemoryBytes != tc.memBytes || d.SMs != tc.sms {
				t.Errorf("%s device %d: index %d name %q memory %d SMs %d", tc.kind, i, d.Index, d.Name, d.MemoryBytes, d.SMs)
			}
			if !uuidRE.MatchString(d.UUID) || seen[d.UUID] {
				t.Errorf("%s device %d: bad or repeated UUID %q", tc.kind, i, d.UUID)
			}
			seen[d.UUID] = true
			if !d.MIGCapable || d.MIGEnabled || d.MIGSlices != 7 {
				t.Errorf("%s device %d: MIG capable %v enabled %v slices %d", tc.kind, i, d.MIGCapable, d.MIGEnabled, d.MIGSlices)
			}
			if got := profileNames(d); !slices.Equal(got, tc.profiles) {
				t.Errorf("%s device %d profiles %v, want %v", tc.kind, i, got, tc.profiles)
			}
			for _, p := range d.MIG {
				if p.Free != 0 || p.Max < 1 {
					t.Errorf("%s %s: free %d max %d with MIG off", tc.kind, p.Name, p.Free, p.Max)
				}
			}
		}
	}
}

func TestMockOptionsAndErrors(t *testing.T) {
	if devs := MustDevices(t, MustMock(t, "dgxh100", 2)); len(devs) != 2 {
		t.Errorf("dgxh100 x2 gave %d devices", len(devs))
	}
	for _, tc := range []struct {
		kind  string
		count int
		opts  []discover.MockOption
		want  string
	}{
		{"dgxb200", 8, nil, `unknown GPU mock "dgxb200" (valid: dgxa100, dgxh100)`},
		{"", 8, nil, `unknown GPU mock ""`},
		{"dgxa100", 0, nil, "GPU mock count must be between 1 and 64, got 0"},
		{"dgxa100", 65, nil, "got 65"},
		{"dgxa100", 2, []discover.MockOption{discover.WithMIG(2)}, "GPU mock MIG device 2 is not among devices 0-1"},
	} {
		src, err := discover.Mock(tc.kind, tc.count, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || src != nil {
			t.Errorf("Mock(%q, %d): %v; want %q", tc.kind, tc.count, err, tc.want)
		}
	}
}

func TestMockUUIDsAreStable(t *testing.T) {
	uuids := func(kind, seed string) []string {
		var out []string
		for _, d := range MustDevices(t, MustMock(t, kind, 4, discover.WithSeed(seed))) {
			out = append(out, d.UUID)
		}
		return out
	}
	a := uuids("dgxa100", "node1")
	if !slices.Equal(a, uuids("dgxa100", "node1")) {
		t.Error("the same mock gave different UUIDs twice")
	}
	for _, other := range [][]string{uuids("dgxa100", "node2"), uuids("dgxh100", "node1")} {
		for _, u := range other {
			if slices.Contains(a, u) {
				t.Errorf("UUID %s repeats across mocks", u)
			}
		}
	}
}

func TestMockMIGProfileChoice(t *testing.T) {
	for _, tc := range []struct {
		kind           string
		amount, perGPU gpu.Hundredths
		want           string
	}{
		{"dgxa100", 10, 100, "1g.5gb"},
		{"dgxa100", 25, 100, "2g.10gb"},
		{"dgxa100", 50, 200, "2g.10gb"},
		{"dgxa100", 50, 100, "4g.20gb"},
		{"dgxa100", 100, 100, "7g.40gb"},
		{"dgxh100", 12, 100, "1g.10gb"},
		{"dgxh100", 13, 100, "1g.20gb"},
		{"dgxh100", 25, 100, "2g.20gb"},
		{"dgxh100", 40, 100, "3g.40gb"},
		{"dgxh100", 100, 100, "7g.80gb"},
	} {
		devs := MustDevices(t, MustMock(t, tc.kind, 2, discover.WithMIG(1)))
		on, off := devs[1], devs[0]
		if !on.MIGEnabled || off.MIGEnabled {
			t.Fatalf("%s: MIG on device 1 only, got %v %v", tc.kind, off.MIGEnabled, on.MIGEnabled)
		}
		for _, p := range on.MIG {
			if p.Free != p.Max {
				t.Errorf("%s %s: %d free of %d on an empty MIG device", tc.kind, p.Name, p.Free, p.Max)
			}
		}
		p, ok := gpu.MIGProfileFor(on, tc.amount, tc.perGPU)
		if !ok || p.Name != tc.want {
			t.Errorf("%s %s/%s fGPU: %q %v, want %q", tc.kind, tc.amount, tc.perGPU, p.Name, ok, tc.want)
		}
		if p, ok := gpu.MIGProfileFor(off, tc.amount, tc.perGPU); ok {
			t.Errorf("%s: device with MIG off gave %s", tc.kind, p.Name)
		}
	}
}

// Packing over discovered devices: the MIG device takes fractions as
// instances, the other as MPS shares, and the env follows.
func TestMockPackAndEnv(t *testing.T) {
	devs := MustDevices(t, MustMock(t, "dgxa100", 2, discover.WithMIG(0)))
	free := gpu.FreeOf(devs, nil, gpu.DefaultPerGPU)
	shares, ok := gpu.Pack(free, gpu.Request{Amount: 150, UID: 1000}, gpu.DefaultPerGPU)
	if !ok || len(shares) != 2 {
		t.Fatalf("1.5 fGPU on two idle devices: %+v %v", shares, ok)
	}
	// The fraction takes the device where it leaves least: 4g.20gb (0.57)
	// on the MIG device; the whole device is the other one.
	if shares[0].MIG == nil || shares[0].MIG.Name != "4g.20gb" || shares[0].Amount != 57 || shares[1].Amount != 100 {
		t.Fatalf("shares %+v", shares)
	}
	if _, err := gpu.EnvFor(shares, devs, gpu.DefaultPerGPU); err == nil {
		t.Fatal("env built before the MIG instance exists")
	}
	shares[0].MIGDevice = "MIG-" + strings.TrimPrefix(devs[0].UUID, "GPU-")
	env, err := gpu.EnvFor(shares, devs, gpu.DefaultPerGPU)
	if err != nil {
		t.Fatal(err)
	}
	want := "CUDA_VISIBLE_DEVICES=" + shares[0].MIGDevice + "," + devs[1].UUID
	if !slices.Contains(env, want) || !slices.Contains(env, "CORRAL_GPU_MEM="+fmt.Sprint(19968+40960)) {
		t.Fatalf("env %v lacks %s or the memory", env, want)
	}
}

// Seed 003: A100-40GB, 2 fGPU per GPU; a 0.5 fGPU session sees 10 GB and 25%
// of the SMs.
func TestSeed003OnDGXA100Mock(t *testing.T) {
	devs := MustDevices(t, MustMock(t, "dgxa100", 8))
	perGPU, err := gpu.ParsePerGPU("2")
	if err != nil {
		t.Fatal(err)
	}
	if got := gpu.NodeCapacity(devs, perGPU); got != 1600 {
		t.Fatalf("capacity %s fGPU, want 16", got)
	}
	req := gpu.Request{Amount: mustFGPU(t, "0.5"), UID: 1000}
	shares, ok := gpu.Pack(gpu.FreeOf(devs, nil, perGPU), req, perGPU)
	if !ok || len(shares) != 1 || shares[0].Device != 0 || shares[0].Amount != 50 {
		t.Fatalf("0.5 fGPU: %+v %v", shares, ok)
	}
	if l := gpu.LimitsOf(devs[0], 50, perGPU); l.MemBytes != 10*gpu.GiB || l.SMPercent != 25 || l.SMs != 27 {
		t.Fatalf("limits %+v, want 10 GiB, 25%%, 27 SMs", l)
	}
	env, err := gpu.EnvFor(shares, devs, perGPU)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CORRAL_FGPU=0.5", "CORRAL_GPU_MEM=10240", "SLURM_JOB_GPUS=0", "SLURM_GPUS_ON_NODE=1",
		"CUDA_VISIBLE_DEVICES=" + devs[0].UUID, "NVIDIA_VISIBLE_DEVICES=" + devs[0].UUID,
		"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=10240M", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
}

func mustFGPU(t testing.TB, s string) gpu.Hundredths {
	t.Helper()
	h, err := gpu.ParseFGPU(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// logLines collects what a source logs.
func logLines(src *discover.Source) *[]string {
	var lines []string
	src.Logf = func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
	return &lines
}

func TestNoNVMLMeansNoGPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  *discover.Source
		want string
	}{
		{"library absent", discover.NVMLAt("/nonexistent/libnvidia-ml.so.1"), "ERROR_LIBRARY_NOT_FOUND"},
		{"driver not loaded", discover.From(&mock.Interface{
			InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED },
		}, "test NVML"), "ERROR_DRIVER_NOT_LOADED"},
	} {
		lines := logLines(tc.src)
		devs, err := tc.src.Devices()
		if devs != nil || err != nil {
			t.Errorf("%s: %v, %v; want no devices and no error", tc.name, devs, err)
		}
		if len(*lines) != 1 || !strings.Contains((*lines)[0], tc.want) || !strings.Contains((*lines)[0], "no GPUs") {
			t.Errorf("%s: logged %q; want one line naming %s", tc.name, *lines, tc.want)
		}
	}
}

// fakeNVML is a hand-made NVML for failure cases the mocks never show.
func fakeNVML(symbols bool, devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
				if symbols {
					return nil
				}
				return fmt.Errorf("undefined symbol: %s", s)
			}}
		},
	}
}

// plainDevice answers only what every NVML answers: no MIG, and (without
// the core-count symbol) GetNumGpuCores is never called, else the moq mock
// would panic.
func plainDevice(uuid string, uuidRet nvml.Return) *mock.Device {
	return &mock.Device{
		GetUUIDFunc:        func() (string, nvml.Return) { return uuid, uuidRet },
		GetNameFunc:        func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS },
		GetMemoryInfoFunc:  func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 15360 << 20}, nvml.SUCCESS },
		GetMigModeFunc:     func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
		GetMinorNumberFunc: func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
	}
}

func TestOlderDriverAndNoMIG(t *testing.T) {
	devs := MustDevices(t, discover.From(fakeNVML(false, plainDevice("GPU-t4", nvml.SUCCESS)), "test NVML"))
	want := gpu.Device{Index: 0, UUID: "GPU-t4", Name: "Tesla T4", MemoryBytes: 15 * gpu.GiB}
	if len(devs) != 1 || !reflect.DeepEqual(devs[0], want) {
		t.Fatalf("devices %+v, want %+v", devs, want)
	}
}

func TestUnreadableDeviceIsLeftOutAndNamed(t *testing.T) {
	src := discover.From(fakeNVML(false,
		plainDevice("GPU-0", nvml.SUCCESS),
		plainDevice("", nvml.ERROR_GPU_IS_LOST),
		plainDevice("GPU-2", nvml.SUCCESS),
	), "test NVML")
	devs, err := src.Devices()
	if len(devs) != 2 || devs[0].UUID != "GPU-0" || devs[1].UUID != "GPU-2" || devs[1].Index != 2 {
		t.Errorf("readable devices %+v, want GPU-0 and GPU-2", devs)
	}
	if err == nil || !strings.Contains(err.Error(), "device 1: reading its UUID: ERROR_GPU_IS_LOST") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v; want one line naming device 1", err)
	}
}
