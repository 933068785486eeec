package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The fractional-GPU acceptance tests (docs/gpu.md), on go-nvml's DGX
// mocks with the stand-in MPS control program: no GPU is needed.

// fakeMPS is the stand-in for nvidia-cuda-mps-control (package mps).
func fakeMPS() string {
	return filepath.Join(filepath.Dir(binDir), "noded", "mps", "testdata", "fake-nvidia-cuda-mps-control")
}

// gpuNode is a node of count mocked A100-40GB, each worth perGPU fGPU. Its
// name is the test's own: job cgroups are named after node and job, and
// another test's leftover job must not be in the way.
func gpuNode(t *testing.T, name string, count int, perGPU string, extra ...string) NodeOpts {
	args := []string{"--gpu-mock", "dgxa100", "--gpu-mock-count", strconv.Itoa(count), "--fgpu-per-gpu", perGPU,
		"--mps-control", fakeMPS(), "--mps-dir", t.TempDir()}
	return NodeOpts{Name: name, CPUs: 8, Mem: "4G", Args: append(args, extra...)}
}

// assertNodeFGPU waits until `corral nodes` shows the node's fGPU as want.
func assertNodeFGPU(t *testing.T, c *Cluster, want string) {
	t.Helper()
	var out string
	for i := 0; i < 100; i++ {
		out = c.Corral("nodes").Stdout
		if strings.Contains(out, " "+want+" ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("corral nodes should show fGPU %s:\n%s", want, out)
}

func idText(id uint64) string { return strconv.FormatUint(id, 10) }

// Acceptance 1, seed 000 on `corral dev`: one mocked GPU worth 2 fGPU,
// three 1-fGPU jobs: two RUNNING, one PENDING (Resources); cancel a
// running one and the third runs within 1 s; the node shows 2/2 fGPU
// allocated, and exactly 0/2 once all have ended.
func TestSeed000FractionalGPUs(t *testing.T) {
	socket := startDev(t, "--cpus", "4", "--mem", "4G", "--gpu-mock", "dgxa100", "--gpu-mock-count", "1",
		"--fgpu-per-gpu", "2", "--mps-control", fakeMPS())
	c := &Cluster{t: t, Socket: socket, Client: api.NewClient(socket)}
	dir := jobDir(t)
	var ids []uint64
	for i := 0; i < 3; i++ {
		ids = append(ids, c.Submit(dir, "--fgpu", "1", "-c", "1", "--mem", "256M", "-J", "fg"+strconv.Itoa(i), "--wrap", "sleep 60"))
	}
	deadline := time.Now().Add(time.Second)
	var running, pending []uint64
	for {
		running, pending = nil, nil
		for _, id := range ids {
			switch j := c.Job(id); {
			case j.State == api.StateRunning:
				running = append(running, id)
			case j.State == api.StatePending && j.Reason == api.ReasonResources:
				pending = append(pending, id)
			}
		}
		if len(running) == 2 && len(pending) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 1s: running %v, pending(Resources) %v; want 2 and 1\n%s", running, pending, c.Corral("queue").Stdout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	q := c.Corral("queue").Stdout
	if !strings.Contains(q, "FGPU") || strings.Count(q, " R ") != 2 || !strings.Contains(q, "(Resources)") {
		t.Errorf("queue should show the fGPU column, two R and one (Resources):\n%s", q)
	}
	assertNodeFGPU(t, c, "2/2")
	if gpus := c.Corral("nodes", "--gpus").Stdout; !strings.Contains(gpus, "Mock NVIDIA A100-SXM4-40GB") || !strings.Contains(gpus, " 2/2 ") {
		t.Errorf("corral nodes --gpus:\n%s", gpus)
	}

	if r := c.Corral("cancel", idText(running[0])); r.Code != 0 {
		t.Fatalf("cancel: %d %s", r.Code, r.Stderr)
	}
	c.WaitState(pending[0], api.StateRunning, time.Second)
	assertNodeFGPU(t, c, "2/2")

	if r := c.Corral("cancel", idText(running[1]), idText(pending[0])); r.Code != 0 {
		t.Fatalf("cancel: %d %s", r.Code, r.Stderr)
	}
	for _, id := range ids {
		c.WaitState(id, api.StateCancelled, 5*time.Second)
	}
	assertNodeFGPU(t, c, "0/2")
}

// jobEnv runs a job that prints its GPU variables and returns them.
func jobEnv(t *testing.T, c *Cluster, args ...string) (map[string]string, *api.Job) {
	t.Helper()
	dir := jobDir(t)
	args = append([]string{"-c", "1", "--mem", "256M", "-o", "env-%j.txt"}, args...)
	id := c.Submit(dir, append(args, "--wrap", "env | grep -E '^(CORRAL_|CUDA_|SLURM_JOB_GPUS|SLURM_GPUS_ON_NODE|NVIDIA_)'")...)
	j := c.WaitEnded(id, 30*time.Second)
	if j.State != api.StateCompleted {
		t.Fatalf("job ended %s (%s)", j.State, j.Message)
	}
	env := map[string]string{}
	for _, l := range readLines(t, filepath.Join(dir, "env-"+idText(id)+".txt")) {
		k, v, _ := strings.Cut(l, "=")
		env[k] = v
	}
	return env, j
}

// Acceptance 2, seed 003: on a mocked A100-40GB worth 2 fGPU, a 0.5-fGPU
// job gets a quarter of the card: a 10 GiB memory limit and 25% of the
// SMs, in its environment.
func TestSeed003QuarterOfAnA100(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{gpuNode(t, "fg003", 1, "2")}})
	env, j := jobEnv(t, c, "--fgpu", "0.5")
	for k, v := range map[string]string{
		"CORRAL_FGPU": "0.5", "CORRAL_GPU_MEM": "10240", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=10240M",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25", "SLURM_JOB_GPUS": "0", "SLURM_GPUS_ON_NODE": "1",
	} {
		if env[k] != v {
			t.Errorf("%s=%q, want %q (env %v)", k, env[k], v, env)
		}
	}
	if !strings.HasPrefix(env["CUDA_VISIBLE_DEVICES"], "GPU-") || env["CUDA_MPS_PIPE_DIRECTORY"] == "" {
		t.Errorf("env %v: want the GPU's UUID and its MPS pipe directory", env)
	}
	if len(j.GPUAlloc) != 1 || j.GPUAlloc[0].Shares[0].AmountHundredths != 50 {
		t.Errorf("job's allocation %+v", j.GPUAlloc)
	}
	if show := c.Corral("show", "job", idText(j.ID)).Stdout; !strings.Contains(show, "GPUsPerNode=0.5 fGPU") {
		t.Errorf("corral show job:\n%s", show)
	}
}

// Acceptance 3: four 0.5-GPU jobs on two GPUs take both devices fully
// (best fit: a half joins a half); a 1-GPU job then waits until one device
// is whole again, and the planner says when: at the later end of the two
// halves of one device, not when half of each is free.
func TestPackingWholeGPUWaitsForADevice(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{gpuNode(t, "fgpack", 2, "1")}})
	dir := jobDir(t)
	var ids []uint64
	for _, limit := range []string{"5", "20", "10", "15"} { // minutes
		ids = append(ids, c.Submit(dir, "--fgpu", "0.5", "-c", "1", "--mem", "128M", "-t", limit, "--wrap", "sleep 600"))
		c.WaitState(ids[len(ids)-1], api.StateRunning, 10*time.Second)
	}
	devOf := map[uint64]int{}
	for _, id := range ids {
		j := c.Job(id)
		if len(j.GPUAlloc) != 1 || len(j.GPUAlloc[0].Shares) != 1 {
			t.Fatalf("job %d allocation %+v", id, j.GPUAlloc)
		}
		devOf[id] = j.GPUAlloc[0].Shares[0].Device
	}
	if devOf[ids[0]] != 0 || devOf[ids[1]] != 0 || devOf[ids[2]] != 1 || devOf[ids[3]] != 1 {
		t.Fatalf("devices %v: want the first two halves on device 0, the others on device 1", devOf)
	}
	gpus := c.Corral("nodes", "--gpus").Stdout
	if strings.Count(gpus, " 1/1 ") != 2 {
		t.Errorf("both devices should be full:\n%s", gpus)
	}

	whole := c.Submit(dir, "--gpus", "1", "-c", "1", "--mem", "128M", "-t", "5", "--wrap", "true")
	j := c.WaitJob(whole, 10*time.Second, "planned", func(j *api.Job) bool { return j.PlannedStart != nil })
	if j.State != api.StatePending || j.Reason != api.ReasonResources {
		t.Fatalf("whole-GPU job %s (%s), want PENDING (Resources)", j.State, j.Reason)
	}
	// Device 1 is whole again when its 15-minute half ends; half of each
	// device is free already when the 10-minute one ends.
	s3, s4 := c.Job(ids[2]).StartTime, c.Job(ids[3]).StartTime
	want := s4.Add(15 * time.Minute)
	if w := s3.Add(10 * time.Minute); w.After(want) {
		want = w
	}
	if d := j.PlannedStart.Sub(want); d < -time.Second || d > time.Second {
		t.Fatalf("planned start %v, want %v (when device 1 is whole)", j.PlannedStart, want)
	}
	if show := c.Corral("show", "job", idText(whole)).Stdout; !strings.Contains(show, "Reason=Resources") || strings.Contains(show, "PlannedStart=Unknown") {
		t.Errorf("corral show job should give the reason and the planned start:\n%s", show)
	}

	// More than the node could ever hold is refused at submit.
	r := c.Corral("submit", "--fgpu", "3", "--wrap", "true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "could never run") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("--fgpu 3 on two GPUs: exit %d, stderr %q", r.Code, r.Stderr)
	}
	for _, id := range append(ids, whole) {
		c.Corral("cancel", idText(id))
	}
	for _, id := range ids {
		c.WaitEnded(id, 10*time.Second)
	}
}

// Acceptance 4: a fraction on a MIG-enabled mock device runs in a MIG
// instance of the profile that holds it (0.25 of an A100-40GB: 2g.10gb).
func TestMIGInstanceForAFraction(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{gpuNode(t, "fgmig", 1, "1", "--gpu-mock-mig", "0")}})
	if gpus := c.Corral("nodes", "--gpus").Stdout; !strings.Contains(gpus, " on ") {
		t.Errorf("the device should show MIG on:\n%s", gpus)
	}
	env, j := jobEnv(t, c, "--fgpu", "0.25")
	if !strings.HasPrefix(env["CUDA_VISIBLE_DEVICES"], "MIG-") || env["CORRAL_GPU_MEM"] != "9856" || env["CUDA_MPS_PIPE_DIRECTORY"] != "" {
		t.Errorf("env %v: want a MIG instance of 9856 MiB and no MPS", env)
	}
	sh := j.GPUAlloc[0].Shares[0]
	if sh.MIG == nil || sh.MIG.Name != "2g.10gb" || sh.AmountHundredths != 28 {
		t.Errorf("share %+v: want 2g.10gb charged 0.28", sh)
	}
	if show := c.Corral("show", "job", idText(j.ID)).Stdout; !strings.Contains(show, "2g.10gb") {
		t.Errorf("corral show job:\n%s", show)
	}
}
