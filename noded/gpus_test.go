package noded

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/noded/nodedtest"
)

// fakeMPS is the stand-in MPS control program (see package mps).
func fakeMPS(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("mps/testdata/fake-nvidia-cuda-mps-control")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gpuConfig is a node of two mocked A100s with the fake MPS program and
// private CDI, /dev and /proc directories; opts change it.
func gpuConfig(t testing.TB, opts ...func(*Config)) Config {
	t.Helper()
	c := Config{Name: "gn", GPUMock: "dgxa100", GPUMockCount: 2, MPSControl: fakeMPS(t), MPSDir: t.TempDir(),
		CDISpecDirs: []string{t.TempDir()}, DevRoot: t.TempDir(), ProcRoot: t.TempDir()}
	for _, o := range opts {
		o(&c)
	}
	if err := c.normalizeGPUs(); err != nil {
		t.Fatal(err)
	}
	return c
}

// MustGPUNode discovers the GPUs of cfg; every MPS daemon stops with the test.
func MustGPUNode(t testing.TB, cfg Config) *gpuNode {
	t.Helper()
	g, err := newGPUNode(&cfg, log.New(testWriter{t}, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if g == nil {
		t.Fatal("no GPUs found")
	}
	t.Cleanup(func() {
		if g.mps != nil {
			if err := g.mps.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return g
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// packed is a launch of job id holding what gpu.Pack gives amount on g's
// idle devices worth perGPU each.
func packed(t testing.TB, g *gpuNode, id uint64, amount, perGPU gpu.Hundredths) *api.LaunchRequest {
	t.Helper()
	shares, ok := gpu.Pack(gpu.FreeOf(g.devs, nil, perGPU), gpu.Request{Amount: amount, UID: 1000}, perGPU)
	if !ok {
		t.Fatalf("%s fGPU does not fit", amount)
	}
	return &api.LaunchRequest{JobID: id, UID: 1000, GID: 1000, GPUs: gpu.SharesAPI(shares), FGPUPerGPUHundredths: int(perGPU)}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestGPUConfig(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{GPUMockCount: 2}, "--gpu-mock-count and --gpu-mock-mig need --gpu-mock"},
		{Config{GPUMock: "dgxb300"}, `--gpu-mock "dgxb300" is unknown (valid: dgxa100, dgxh100)`},
		{Config{GPUMock: "dgxh100", GPUMockCount: 65}, "--gpu-mock-count 65 must be between 1 and 64"},
		{Config{FGPUPerGPU: 50}, "--fgpu-per-gpu: must be at least 1 fGPU per GPU, got 0.5"},
	} {
		if err := tc.c.normalizeGPUs(); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	c := Config{Name: "n7", GPUMock: "dgxh100"}
	if err := c.normalizeGPUs(); err != nil || c.GPUMockCount != 8 || c.MPSDir != "/run/corral/mps/n7" || c.DevRoot != "/dev" {
		t.Errorf("defaults: %v %+v", err, c)
	}
}

func TestNoNVMLNoGPUs(t *testing.T) {
	cfg := gpuConfig(t, func(c *Config) { c.GPUMock, c.GPUMockCount, c.NVMLPath = "", 0, "/nonexistent/libnvidia-ml.so.1" })
	g, err := newGPUNode(&cfg, log.New(testWriter{t}, "", 0))
	if g != nil || err != nil || g.devices() != nil {
		t.Fatalf("without NVML: %v %v", g, err)
	}
	if _, _, err := g.claim(&api.LaunchRequest{JobID: 3, GPUs: []api.GPUShare{{Device: 0, AmountHundredths: 100}}}); err == nil ||
		!strings.Contains(err.Error(), "this node has no GPUs") {
		t.Fatalf("a GPU launch on a node without GPUs: %v", err)
	}
	cfg.MPSControl = "/nonexistent/mps"
	cfg.GPUMock, cfg.GPUMockCount = "dgxa100", 1
	if _, err := newGPUNode(&cfg, log.New(testWriter{t}, "", 0)); err == nil || !strings.Contains(err.Error(), "--mps-control") {
		t.Fatalf("a missing --mps-control: %v", err)
	}
}

// Seed 003 on the node: 0.5 fGPU of an A100-40GB worth 2 fGPU is a
// quarter of the card under its GPU's MPS daemon, which starts for the job
// and stops after it.
func TestClaimMPSFraction(t *testing.T) {
	g := MustGPUNode(t, gpuConfig(t))
	if d := g.devices(); len(d) != 2 || d[0].Name != "Mock NVIDIA A100-SXM4-40GB" || d[1].Minor != 1 {
		t.Fatalf("devices %+v", d)
	}
	r := packed(t, g, 1, 50, 200)
	setup, c, err := g.claim(r)
	if err != nil {
		t.Fatal(err)
	}
	uuid := g.devs[0].UUID
	client := g.mps.ClientOf(uuid)
	env := envMap(setup.Env)
	for k, v := range map[string]string{
		"CORRAL_FGPU": "0.5", "CORRAL_GPU_MEM": "10240", "CUDA_VISIBLE_DEVICES": uuid, "NVIDIA_VISIBLE_DEVICES": uuid,
		"SLURM_JOB_GPUS": "0", "SLURM_GPUS_ON_NODE": "1", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=10240M",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25", "CUDA_MPS_PIPE_DIRECTORY": client.PipeDir,
	} {
		if env[k] != v {
			t.Errorf("%s=%q, want %q (env %v)", k, env[k], v, setup.Env)
		}
	}
	if c.MPS != uuid || len(c.MIG) != 0 || g.mps.Users()[uuid] != 1 {
		t.Fatalf("claim %+v, users %v", c, g.mps.Users())
	}
	if len(setup.Binds) != 1 || setup.Binds[0].Source != client.PipeDir || !setup.Binds[0].Writable {
		t.Fatalf("binds %+v: want the pipe directory, writable", setup.Binds)
	}
	if len(setup.Devices) != 0 {
		t.Fatalf("devices %+v on a host without device nodes", setup.Devices)
	}
	// A second fraction of the same GPU shares the daemon.
	r2 := packed(t, g, 2, 50, 200)
	_, c2, err := g.claim(r2)
	if err != nil || g.mps.Users()[uuid] != 2 {
		t.Fatalf("second claim: %v, users %v", err, g.mps.Users())
	}
	g.release(1, c)
	g.release(2, c2)
	if len(g.mps.Users()) != 0 {
		t.Fatalf("users after both ended: %v", g.mps.Users())
	}
	if b, _ := os.ReadFile(filepath.Join(client.LogDir, "fake.log")); strings.Count(string(b), "start") != 1 || !strings.HasSuffix(string(b), "quit\n") {
		t.Fatalf("the daemon's calls:\n%s", b)
	}
	// Whole GPUs need no MPS.
	_, c3, err := g.claim(packed(t, g, 3, 400, 200))
	if err != nil || c3.MPS != "" || len(g.mps.Users()) != 0 {
		t.Fatalf("two whole GPUs: %v %+v %v", err, c3, g.mps.Users())
	}
}

// Acceptance 4 on the node: a share on a MIG-enabled device gets an
// instance of its profile, named in the job's environment, and the
// instance goes when the job ends.
func TestClaimMIG(t *testing.T) {
	g := MustGPUNode(t, gpuConfig(t, func(c *Config) { c.GPUMockMIG = []int{0, 1} }))
	if g.mps != nil {
		t.Error("an MPS supervisor on a node whose GPUs are all in MIG mode")
	}
	r := packed(t, g, 1, 50, 200) // a quarter: 2g.10gb
	if r.GPUs[0].MIG == nil || r.GPUs[0].MIG.Name != "2g.10gb" {
		t.Fatalf("shares %+v", r.GPUs)
	}
	setup, c, err := g.claim(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MIG) != 1 || !strings.HasPrefix(c.MIG[0].UUID, "MIG-") || c.MIG[0].Device != r.GPUs[0].Device {
		t.Fatalf("claim %+v", c)
	}
	env := envMap(setup.Env)
	if env["CUDA_VISIBLE_DEVICES"] != c.MIG[0].UUID || env["CORRAL_GPU_MEM"] != "9856" || env["CUDA_MPS_PIPE_DIRECTORY"] != "" {
		t.Fatalf("env %v", setup.Env)
	}
	free := func() int {
		devs, err := g.src.Devices()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range devs[r.GPUs[0].Device].MIG {
			if p.Name == "2g.10gb" {
				return p.Free
			}
		}
		return -1
	}
	if free() != 2 {
		t.Fatalf("2g.10gb free with one made: %d, want 2", free())
	}
	g.release(1, c)
	if free() != 3 {
		t.Fatalf("2g.10gb free after the job: %d, want 3", free())
	}
}

// mknodAll makes character device nodes under dir ("nvidia0": 195:0).
func mknodAll(t *testing.T, dir string, nodes map[string][2]uint32) {
	t.Helper()
	for name, mm := range nodes {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(mm[0], mm[1]))); err != nil {
			t.Fatal(err)
		}
	}
}

// A job's container gets the control nodes and its own GPUs' nodes, not
// the others'; a MIG job also its instance's capability nodes.
func TestClaimDeviceNodes(t *testing.T) {
	containertest.MustRoot(t)
	cfg := gpuConfig(t, func(c *Config) { c.GPUMockMIG = []int{1} })
	mknodAll(t, cfg.DevRoot, map[string][2]uint32{"nvidiactl": {195, 255}, "nvidia-uvm": {510, 0}, "nvidia0": {195, 0},
		"nvidia1": {195, 1}, "nvidia-caps/nvidia-cap21": {511, 21}, "nvidia-caps/nvidia-cap22": {511, 22}})
	g := MustGPUNode(t, cfg)
	paths := func(r *api.LaunchRequest) ([]string, *gpuClaim) {
		setup, c, err := g.claim(r)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range setup.Devices {
			out = append(out, fmt.Sprintf("%s=%d:%d", d.Path, d.Major, d.Minor))
		}
		return out, c
	}
	// Device 0 is not in MIG mode: a whole GPU.
	r := &api.LaunchRequest{JobID: 1, GPUs: []api.GPUShare{{Device: 0, AmountHundredths: 100}}, FGPUPerGPUHundredths: 100}
	got, c := paths(r)
	if want := []string{"/dev/nvidiactl=195:255", "/dev/nvidia-uvm=510:0", "/dev/nvidia0=195:0"}; !slices.Equal(got, want) {
		t.Fatalf("devices %v, want %v", got, want)
	}
	g.release(1, c)
	// Device 1 is: the instance's capabilities, as the driver lists them.
	p, _ := gpu.MIGProfileFor(g.devs[1], 25, 100)
	share := gpu.Share{Device: 1, Amount: gpu.MIGCharge(p, g.devs[1].MIGSlices, 100), MIG: &p}
	rm := &api.LaunchRequest{JobID: 2, GPUs: gpu.SharesAPI([]gpu.Share{share}), FGPUPerGPUHundredths: 100}
	gi := filepath.Join(cfg.ProcRoot, "driver/nvidia/capabilities/gpu1/mig/gi0")
	os.MkdirAll(filepath.Join(gi, "ci0"), 0o755)
	os.WriteFile(filepath.Join(gi, "access"), []byte("DeviceFileMinor: 21\nDeviceFileMode: 292\n"), 0o644)
	os.WriteFile(filepath.Join(gi, "ci0", "access"), []byte("DeviceFileMinor: 22\nDeviceFileMode: 292\n"), 0o644)
	got, c = paths(rm)
	want := []string{"/dev/nvidiactl=195:255", "/dev/nvidia-uvm=510:0", "/dev/nvidia1=195:1",
		"/dev/nvidia-caps/nvidia-cap21=511:21", "/dev/nvidia-caps/nvidia-cap22=511:22"}
	if c.MIG[0].GI != 0 || c.MIG[0].CI != 0 || !slices.Equal(got, want) {
		t.Fatalf("MIG instance %+v devices %v, want %v", c.MIG, got, want)
	}
	g.release(2, c)
}

// With a CDI spec naming the GPUs, the job gets what the spec gives: its
// device nodes, mounts and environment, corral's GPU variables winning.
func TestClaimCDI(t *testing.T) {
	containertest.MustRoot(t)
	cfg := gpuConfig(t)
	mknodAll(t, cfg.DevRoot, map[string][2]uint32{"nvidiactl": {195, 255}, "nvidia0": {195, 0}, "nvidia1": {195, 1}})
	g0 := MustGPUNode(t, cfg) // for the UUIDs
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	os.WriteFile(lib, nil, 0o644)
	spec := fmt.Sprintf(`cdiVersion: "0.5.0"
kind: nvidia.com/gpu
devices:
- name: %s
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
      hostPath: %s/nvidia0
- name: "1"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
      hostPath: %s/nvidia1
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  - FROM_CDI=yes
  deviceNodes:
  - path: /dev/nvidiactl
    hostPath: %s/nvidiactl
  mounts:
  - hostPath: %s
    containerPath: /usr/lib/libcuda.so.1
    options: [ro, nosuid, nodev, bind]
`, g0.devs[0].UUID, cfg.DevRoot, cfg.DevRoot, cfg.DevRoot, lib)
	if err := os.WriteFile(filepath.Join(cfg.CDISpecDirs[0], "nvidia.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	g := MustGPUNode(t, cfg)
	if g.cdi == nil {
		t.Fatal("the CDI spec was not found")
	}
	for _, tc := range []struct {
		dev  int
		node string
	}{{0, "/dev/nvidia0"}, {1, "/dev/nvidia1"}} { // by UUID, by index
		setup, c, err := g.claim(&api.LaunchRequest{JobID: 1, UID: 1000, GID: 1000, FGPUPerGPUHundredths: 100,
			GPUs: []api.GPUShare{{Device: tc.dev, AmountHundredths: 100}}})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, d := range setup.Devices {
			paths = append(paths, d.Path)
		}
		slices.Sort(paths)
		if want := []string{tc.node, "/dev/nvidiactl"}; !slices.Equal(paths, want) {
			t.Errorf("device %d: nodes %v, want %v", tc.dev, paths, want)
		}
		env := envMap(setup.Env)
		if env["FROM_CDI"] != "yes" || env["NVIDIA_VISIBLE_DEVICES"] != g.devs[tc.dev].UUID || strings.Count(strings.Join(setup.Env, "\n"), "NVIDIA_VISIBLE_DEVICES=") != 1 {
			t.Errorf("device %d: env %v", tc.dev, setup.Env)
		}
		if len(setup.Binds) != 1 || setup.Binds[0].Source != lib || setup.Binds[0].Writable {
			t.Errorf("device %d: binds %+v", tc.dev, setup.Binds)
		}
		g.release(1, c)
	}
}

func TestClaimRefusesBadShares(t *testing.T) {
	g := MustGPUNode(t, gpuConfig(t, func(c *Config) { c.GPUMockMIG = []int{1} }))
	for _, tc := range []struct {
		r    api.LaunchRequest
		want string
	}{
		{api.LaunchRequest{JobID: 1, FGPUPerGPUHundredths: 100, GPUs: []api.GPUShare{{Device: 5, AmountHundredths: 100}}}, "device 5 is not on this node"},
		{api.LaunchRequest{JobID: 1, FGPUPerGPUHundredths: 0, GPUs: []api.GPUShare{{Device: 0, AmountHundredths: 50}}}, "fgpu_per_gpu"},
		{api.LaunchRequest{JobID: 1, FGPUPerGPUHundredths: 100, GPUs: []api.GPUShare{{Device: 0, AmountHundredths: 150}}}, "outside (0, 1]"},
		{api.LaunchRequest{JobID: 1, FGPUPerGPUHundredths: 100, GPUs: []api.GPUShare{{Device: 1, AmountHundredths: 50}}}, "MIG mode on but its share names no MIG profile"},
	} {
		_, _, err := g.claim(&tc.r)
		var le *launchError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &le) || le.code != http.StatusBadRequest {
			t.Errorf("%+v: %v, want a 400 naming %q", tc.r.GPUs, err, tc.want)
		}
	}
	if len(g.mps.Users()) != 0 {
		t.Fatalf("refused launches left MPS users %v", g.mps.Users())
	}
}

// A GPU job end to end on a mocked node: registration lists the GPUs and
// the job's environment says what it got.
func TestGPUJobEnvironment(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	mps := t.TempDir()
	n := mustNode(t, ctld, "", func(c *Config) {
		c.GPUMock, c.GPUMockCount, c.FGPUPerGPU, c.MPSControl, c.MPSDir = "dgxa100", 1, 200, fakeMPS(t), mps
		c.CDISpecDirs = []string{t.TempDir()}
	})
	t.Cleanup(func() { // nothing may outlive a failed test
		if n.d.gpus != nil && n.d.gpus.mps != nil {
			n.d.gpus.mps.Close()
		}
	})
	ctld.WaitFor("a registration", func(f *nodedtest.FakeCtld) bool { return len(f.Registers) > 0 })
	ctld.Lock()
	reg := ctld.Registers[0]
	ctld.Unlock()
	if len(reg.GPUs) != 1 || reg.GPUs[0].Name != "Mock NVIDIA A100-SXM4-40GB" || reg.FGPUPerGPUHundredths != 200 {
		t.Fatalf("registration GPUs %+v, fgpu_per_gpu %d", reg.GPUs, reg.FGPUPerGPUHundredths)
	}
	req := n.launchReq("env | grep -E '^(CORRAL_FGPU|CORRAL_GPU_MEM|CUDA_[A-Z_]*|SLURM_JOB_GPUS|SLURM_GPUS_ON_NODE)=' | sort\ntest -d \"$CUDA_MPS_PIPE_DIRECTORY\" && echo pipe ok\n")
	req.Env = append(req.Env, "CUDA_VISIBLE_DEVICES=0,1,2,3") // the submitter's own: overridden
	req.GPUs = []api.GPUShare{{Device: 0, AmountHundredths: 50}}
	req.FGPUPerGPUHundredths = 200
	n.launch(t, req)
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCompleted {
		t.Fatalf("ended %+v", ev)
	}
	out, _ := os.ReadFile(filepath.Join(n.work, fmt.Sprintf("corral-%d.out", req.JobID)))
	uuid := reg.GPUs[0].UUID
	pipe := filepath.Join(mps, uuid, "pipe")
	want := strings.Join([]string{"CORRAL_FGPU=0.5", "CORRAL_GPU_MEM=10240", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
		"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=10240M", "CUDA_MPS_PIPE_DIRECTORY=" + pipe, "CUDA_VISIBLE_DEVICES=" + uuid,
		"SLURM_GPUS_ON_NODE=1", "SLURM_JOB_GPUS=0", "pipe ok"}, "\n") + "\n"
	if string(out) != want {
		t.Fatalf("job output:\n%s\nwant:\n%s", out, want)
	}
	if users := n.d.gpus.mps.Users(); len(users) != 0 {
		t.Fatalf("MPS users after the job: %v", users)
	}
	mustNoJobDirs(t, n)
}
