package ctld

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// a100s are n A100-40GB devices as a node reports them (mig: in MIG mode,
// with the profiles go-nvml's dgxa100 mock lists).
func a100s(n int, mig bool) []api.GPU {
	var out []api.GPU
	for i := 0; i < n; i++ {
		g := api.GPU{Index: i, Minor: i, UUID: fmt.Sprintf("GPU-a100-%d", i), Name: "NVIDIA A100-SXM4-40GB",
			MemoryBytes: 40960 << 20, SMs: 108, MIGCapable: true}
		if mig {
			g.MIGEnabled, g.MIGSlices = true, 7
			for _, p := range []struct{ id, slices, mib, max int }{{0, 1, 4864, 7}, {1, 2, 9856, 3}, {2, 3, 19968, 2}, {3, 4, 19968, 1}, {4, 7, 40192, 1}} {
				e := gpu.MIGMemEighths(int64(p.mib)<<20, g.MemoryBytes)
				g.MIG = append(g.MIG, api.MIGProfile{ID: p.id, Name: gpu.MIGName(p.slices, e, g.MemoryBytes, ""), Slices: p.slices,
					SMs: 14 * p.slices, MemoryBytes: int64(p.mib) << 20, MemEighths: e, Max: p.max, Free: p.max})
			}
		}
		out = append(out, g)
	}
	return out
}

// MustGPUNode registers a fake node with these GPUs (perGPU: its own
// --fgpu-per-gpu in hundredths, 0 for none).
func MustGPUNode(tc *testCluster, name string, gpus []api.GPU, perGPU int) *fakeNode {
	tc.t.Helper()
	f := newFakeNode(tc, name, 8, 8<<30)
	f.set(func(f *fakeNode) { f.gpus, f.perGPU = gpus, perGPU })
	f.register()
	return f
}

func fgpuJob(name string, hundredths int) api.JobSpec {
	s := script(name)
	s.FGPUHundredths = hundredths
	return s
}

// Seed 000 in the controller: one GPU worth 2 fGPU, three 1-fGPU jobs:
// two run (with their shares sent to the node), one waits for Resources
// and runs when one ends; the node's fGPU shows 2/2 and then 0/2.
func TestSeed000FractionsOfOneGPU(t *testing.T) {
	tc := MustServer(t)
	n := MustGPUNode(tc, "g1", a100s(1, false), 200)
	var ids []uint64
	for i := 0; i < 3; i++ {
		ids = append(ids, tc.submit(fgpuJob(fmt.Sprint("s", i), 100)))
	}
	l1, l2 := n.waitLaunch(), n.waitLaunch()
	for _, l := range []api.LaunchRequest{l1, l2} {
		if len(l.GPUs) != 1 || l.GPUs[0].Device != 0 || l.GPUs[0].AmountHundredths != 100 || l.FGPUPerGPUHundredths != 200 {
			t.Fatalf("launch of job %d: shares %+v worth %d", l.JobID, l.GPUs, l.FGPUPerGPUHundredths)
		}
	}
	third := tc.waitJob(ids[2], "Resources", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	if third.State != api.StatePending || third.FGPUHundredths != 100 {
		t.Fatalf("third job %+v", third)
	}
	node := tc.node("g1")
	if node.FGPUHundredths != 200 || node.AllocFGPUHundredths != 200 || node.FGPUPerGPUHundredths != 200 ||
		len(node.GPUs) != 1 || node.GPUs[0].AllocHundredths != 200 || len(node.GPUs[0].Jobs) != 2 {
		t.Fatalf("node while two run: %+v", node)
	}
	running := tc.job(l1.JobID)
	if len(running.GPUAlloc) != 1 || running.GPUAlloc[0].Node != "g1" || running.GPUAlloc[0].Shares[0].AmountHundredths != 100 {
		t.Fatalf("running job's allocation %+v", running.GPUAlloc)
	}
	if err := n.end(l1.JobID, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l3 := n.waitLaunch(); l3.JobID != ids[2] || len(l3.GPUs) != 1 {
		t.Fatalf("after an end, launch %+v", l3)
	}
	for _, id := range []uint64{l2.JobID, ids[2]} {
		if err := n.end(id, api.StateCompleted, 0); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "all fGPU free", func() bool { return tc.node("g1").AllocFGPUHundredths == 0 })
	if node := tc.node("g1"); node.FGPUHundredths != 200 || node.GPUs[0].AllocHundredths != 0 || len(node.GPUs[0].Jobs) != 0 {
		t.Fatalf("node after all ended: %+v", node)
	}
	// An ended job keeps its allocation on record and is billed for it.
	done := tc.job(l1.JobID)
	if len(done.GPUAlloc) != 1 || gpu.Physical(&done, 1) != 0.5 {
		t.Fatalf("ended job's allocation %+v (%v GPUs)", done.GPUAlloc, gpu.Physical(&done, 1))
	}
}

// The node's own --fgpu-per-gpu wins; a node without one takes its
// partition's FGPUPerGPU, else 1.
func TestFGPUPerGPURule(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=gpu Nodes=a,b FGPUPerGPU=5 Default=YES\nPartitionName=other Nodes=c\n"))
	MustGPUNode(tc, "a", a100s(2, false), 200)
	MustGPUNode(tc, "b", a100s(2, false), 0)
	MustGPUNode(tc, "c", a100s(1, false), 0)
	for name, want := range map[string]int{"a": 200, "b": 500, "c": 100} {
		if n := tc.node(name); n.FGPUPerGPUHundredths != want || n.FGPUHundredths != want*len(n.GPUs) {
			t.Errorf("node %s: %d per GPU, %d in all; want %d per GPU", name, n.FGPUPerGPUHundredths, n.FGPUHundredths, want)
		}
	}
}

// A job no node could ever hold is refused at submit with one line; the
// Slurm spellings are resolved into whole GPUs per node.
func TestSubmitGPUChecks(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=gpu Nodes=g1,c1 Default=YES\nPartitionName=cpu Nodes=c1\n"))
	MustGPUNode(tc, "g1", a100s(2, false), 200)
	newFakeNode(tc, "c1", 8, 8<<30).register()
	for _, tc2 := range []struct {
		mut  func(*api.JobSpec)
		want string
	}{
		{func(s *api.JobSpec) { s.FGPUHundredths, s.Partition = 50, "cpu" }, "job asks for 0.5 fGPU per node but no node in partition cpu has GPUs: it could never run"},
		{func(s *api.JobSpec) { s.GPUs = []api.GresRequest{{Name: "gpu", Type: "h100", Count: 1}} },
			"job asks for GPUs of type h100 but partition gpu has none (models: NVIDIA A100-SXM4-40GB): it could never run"},
		{func(s *api.JobSpec) { s.FGPUHundredths = 450 }, "job asks for 4.5 fGPU per node (and 1 CPUs) but no node in partition gpu can hold it (largest: 2 GPUs worth 2 fGPU each)"},
		{func(s *api.JobSpec) { s.GPUsPerNode = []api.GresRequest{{Name: "gpu", Count: 3}} }, "job asks for 3 GPU(s) per node"},
		{func(s *api.JobSpec) { s.GPUs = []api.GresRequest{{Name: "gpu", Count: 1}}; s.Nodes = 2 }, "job asks for 2 nodes with 1 GPU(s) each but partition gpu has 1 that can hold it"},
		{func(s *api.JobSpec) { s.Gres = []api.GresRequest{{Name: "nic", Count: 1}} }, `generic resource "nic" does not exist on this cluster (it has gpu)`},
		{func(s *api.JobSpec) { s.FGPUHundredths = 50; s.GPUs = []api.GresRequest{{Name: "gpu", Count: 1}} }, "--fgpu and whole GPUs"},
		{func(s *api.JobSpec) { s.FGPUHundredths = -5 }, "fGPU per node must be between 0.01 and 100000"},
	} {
		spec := script("bad")
		tc2.mut(&spec)
		_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
		if err == nil || statusOf(err) != 400 || !strings.Contains(err.Error(), tc2.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v; want a 400 with %q", spec, err, tc2.want)
		}
	}
	// --gpus a100:3 over 2 nodes is 2 whole GPUs per node (rounded up):
	// one node has 2, so it fits; a typed request keeps its type.
	spec := script("whole")
	spec.GPUs = []api.GresRequest{{Name: "gpu", Type: "a100", Count: 2}}
	id := tc.submit(spec)
	if j := tc.job(id); j.GPUs != 2 || j.GPUType != "a100" || j.FGPUHundredths != 0 {
		t.Fatalf("resolved request %d GPUs of %q, %d fGPU", j.GPUs, j.GPUType, j.FGPUHundredths)
	}
}

// Whole GPUs take each device's worth; the launch names both devices.
func TestWholeGPUsLaunch(t *testing.T) {
	tc := MustServer(t)
	n := MustGPUNode(tc, "g1", a100s(2, false), 200)
	spec := script("whole")
	spec.GPUsPerNode = []api.GresRequest{{Name: "gpu", Count: 2}}
	tc.submit(spec)
	l := n.waitLaunch()
	if len(l.GPUs) != 2 || l.GPUs[0].AmountHundredths != 200 || l.GPUs[1].AmountHundredths != 200 {
		t.Fatalf("launch shares %+v", l.GPUs)
	}
	if node := tc.node("g1"); node.AllocFGPUHundredths != 400 {
		t.Fatalf("node fGPU %d/%d", node.AllocFGPUHundredths, node.FGPUHundredths)
	}
}

// Acceptance 4 in the controller: a fraction on a MIG-enabled device is
// placed with its profile, charged what the profile takes.
func TestMIGShareInLaunch(t *testing.T) {
	tc := MustServer(t)
	n := MustGPUNode(tc, "g1", a100s(1, true), 0)
	tc.submit(fgpuJob("mig", 50))
	l := n.waitLaunch()
	if len(l.GPUs) != 1 || l.GPUs[0].MIG == nil || l.GPUs[0].MIG.Name != "4g.20gb" || l.GPUs[0].AmountHundredths != 57 {
		t.Fatalf("launch shares %+v", l.GPUs)
	}
}

// Allocations and devices survive a restart: the planner does not give
// the running job's device to another before the node re-registers.
func TestGPUAllocSurvivesRestart(t *testing.T) {
	tc := MustServer(t)
	n := MustGPUNode(tc, "g1", a100s(1, false), 100)
	first := tc.submit(fgpuJob("a", 60))
	n.waitLaunch()
	tc.Restart()
	n.register()
	second := tc.submit(fgpuJob("b", 60))
	tc.waitJob(second, "Resources", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	n.noLaunch()
	if j := tc.job(first); j.State != api.StateRunning || len(j.GPUAlloc) != 1 {
		t.Fatalf("first job after restart: %+v", j)
	}
	if node := tc.node("g1"); len(node.GPUs) != 1 || node.AllocFGPUHundredths != 60 {
		t.Fatalf("node after restart: %+v", node)
	}
}

func TestGPUAccountingAndBilling(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(100 * time.Second)
	j := api.Job{ID: 1, State: api.StateCompleted, CPUs: 1, NodeCount: 1, Nodes: []string{"g1"}, StartTime: &start, EndTime: &end,
		FGPUHundredths: 50, GPUAlloc: []api.NodeGPUs{{Node: "g1", FGPUPerGPUHundredths: 200, Shares: []api.GPUShare{{Device: 0, AmountHundredths: 50}}}},
		Runs: []api.JobRun{{State: api.StateRequeued, StartTime: start.Add(-time.Hour), EndTime: start.Add(-time.Hour + 40*time.Second), GPUs: 0.5}}}
	recs := acctRecords(&j)
	if len(recs) != 2 || recs[0].GPUTimeS != 20 || recs[1].GPUTimeS != 25 {
		t.Fatalf("GPU times %+v", recs)
	}
	// A quarter of a GPU is billed a quarter of the GPU weight.
	tc := MustServer(t)
	with := tc.srv.fs.Billing(&j, 1)
	j.GPUAlloc, j.FGPUHundredths = nil, 0
	without := tc.srv.fs.Billing(&j, 1)
	if d := with - without; d < 0.499 || d > 0.501 { // default GPU weight 2 x 0.25
		t.Fatalf("billing with a quarter GPU %v, without %v", with, without)
	}
}
