package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// gpuNodes: one node of two A100s worth 2 fGPU each, one in MIG mode, with
// 1.5 fGPU allocated; one node without GPUs.
func gpuNodes() []api.Node {
	a100 := func(i int, mig bool) api.GPU {
		return api.GPU{Index: i, UUID: "GPU-" + string(rune('a'+i)), Name: "NVIDIA A100-SXM4-40GB", MemoryBytes: 40 << 30,
			MIGCapable: true, MIGEnabled: mig}
	}
	return []api.Node{
		{Name: "g1", State: api.NodeMixed, CPUs: 8, MemBytes: 8 << 30, Partitions: []string{"gpu"},
			FGPUHundredths: 400, AllocFGPUHundredths: 150, FGPUPerGPUHundredths: 200,
			GPUs: []api.NodeGPU{{GPU: a100(0, false), AllocHundredths: 100, Jobs: []uint64{4, 5}},
				{GPU: a100(1, true), AllocHundredths: 50, Jobs: []uint64{6}}}},
		{Name: "c1", State: api.NodeIdle, CPUs: 4, MemBytes: 4 << 30, Partitions: []string{"batch"}},
	}
}

func TestNodesShowFGPU(t *testing.T) {
	f := MustFakeCtld(t)
	f.nodes = gpuNodes()
	r := f.run("nodes")
	want := "NODE  STATE  CPUS(A/T)  MEMORY(A/T)  FGPU(A/T)  PARTITIONS\n" +
		"c1    idle   0/4        0/4.0G       -          batch\n" +
		"g1    mixed  0/8        0/8.0G       1.5/4      gpu\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("got exit %d:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	r = f.run("nodes", "--gpus")
	want = "NODE  GPU  MODEL                  MEMORY  MIG  FGPU(A/T)  JOBS\n" +
		"g1    0    NVIDIA A100-SXM4-40GB  40.0G   off  1/2        4,5\n" +
		"g1    1    NVIDIA A100-SXM4-40GB  40.0G   on   0.5/2      6\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--gpus: got exit %d:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
}

// gpuJobs: a running 0.5-fGPU job and a pending job asking for two A100s.
func gpuJobs(now time.Time) []api.Job {
	start := now.Add(-time.Minute)
	return []api.Job{
		{ID: 4, Name: "half", User: "alice", Partition: "gpu", State: api.StateRunning, CPUs: 1, NodeCount: 1,
			Nodes: []string{"g1"}, StartTime: &start, SubmitTime: start, FGPUHundredths: 50,
			GPUAlloc: []api.NodeGPUs{{Node: "g1", FGPUPerGPUHundredths: 200, Shares: []api.GPUShare{{Device: 0, AmountHundredths: 50}}}}},
		{ID: 7, Name: "two", User: "bob", Partition: "gpu", State: api.StatePending, Reason: api.ReasonResources, CPUs: 1,
			NodeCount: 1, SubmitTime: start, GPUs: 2, GPUType: "a100"},
		{ID: 9, Name: "cpu", User: "bob", Partition: "batch", State: api.StatePending, Reason: api.ReasonPriority, CPUs: 1,
			NodeCount: 1, SubmitTime: start},
	}
}

func TestQueueShowsFGPU(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = gpuJobs(time.Now())
	r := f.run("queue")
	want := "JOBID  PARTITION  NAME  USER   ST  TIME  FGPU        NODES  NODELIST(REASON)\n" +
		"4      gpu        half  alice  R   1:00  0.5         1      g1\n" +
		"7      gpu        two   bob    PD  0:00  gpu:a100:2  1      (Resources)\n" +
		"9      batch      cpu   bob    PD  0:00  -           1      (Priority)\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("got exit %d:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	f.jobs = f.jobs[2:] // no GPU job: squeue's columns
	if r := f.run("queue"); !strings.HasPrefix(r.stdout, "JOBID  PARTITION  NAME  USER  ST  TIME  NODES  NODELIST(REASON)\n") {
		t.Errorf("without GPU jobs: %q", r.stdout)
	}
}

func TestShowJobGPUs(t *testing.T) {
	now := time.Now()
	jobs := gpuJobs(now)
	mig := &api.MIGProfile{Name: "2g.10gb"}
	jobs[0].GPUAlloc[0].Shares = append(jobs[0].GPUAlloc[0].Shares, api.GPUShare{Device: 1, AmountHundredths: 57, MIG: mig, MIGDevice: "MIG-x"})
	for _, tc := range []struct {
		job  api.Job
		want string
	}{
		{jobs[0], "   GPUsPerNode=0.5 fGPU FGPU=1.07 GPUAlloc=g1:0=0.5,1=0.57(2g.10gb MIG-x)\n"},
		{jobs[1], "   GPUsPerNode=2 GPU of type a100 FGPU=gpu:a100:2\n"},
	} {
		var b strings.Builder
		if err := writeJobDetails(&b, &tc.job, now); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(b.String(), "\n")
		at := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "   NodeList=") {
				at = i
			}
		}
		if at < 0 || lines[at+1] != tc.want {
			t.Errorf("job %d:\n%s\nwant after NodeList: %q", tc.job.ID, b.String(), tc.want)
		}
	}
	var b strings.Builder
	writeJobDetails(&b, &jobs[2], now)
	if strings.Contains(b.String(), "GPU") {
		t.Errorf("a job without GPUs shows GPU lines:\n%s", b.String())
	}
}
