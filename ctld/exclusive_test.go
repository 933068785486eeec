package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func exclusiveJob(name, mode string) api.JobSpec {
	s := script(name)
	s.MemBytes, s.Exclusive = 0, mode
	return s
}

// --exclusive in the controller: the job waits for a busy node to empty
// (--test-only shows when and where), then gets all of its CPUs, memory
// per CPU for all of them, and the node to itself; a job submitted
// meanwhile waits for its end.
func TestExclusiveJobGetsTheWholeNode(t *testing.T) {
	tc := MustServer(t)
	n1 := newFakeNode(tc, "n1", 4, 8<<30)
	n1.register()
	busy := script("busy")
	busy.TimeLimit = 3600
	first := tc.submit(busy)
	if l := n1.waitLaunch(); l.JobID != first || l.CPUs != 1 {
		t.Fatalf("launch %+v, want job %d on 1 CPU", l, first)
	}

	spec := exclusiveJob("whole", "node")
	resp, err := tc.client.TestSubmit(context.Background(), api.SubmitRequest{Spec: spec})
	if err != nil || resp.Start == nil || len(resp.Nodes) != 1 || resp.Nodes[0] != "n1" {
		t.Fatalf("test-only of an exclusive job beside a busy one: %+v, %v", resp, err)
	}
	if started := tc.job(first).StartTime; !resp.Start.Equal(started.Add(time.Hour)) {
		t.Errorf("test-only start %v, want the busy job's end %v", resp.Start, started.Add(time.Hour))
	}
	whole := tc.submit(spec)
	tc.waitJob(whole, "the exclusive job to wait", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	n1.noLaunch() // 3 CPUs are free, but the node is not empty

	if err := n1.end(first, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	l := n1.waitLaunch()
	if l.JobID != whole || l.CPUs != 4 || l.MemBytes != 8<<30 {
		t.Fatalf("launch of the exclusive job: job %d, %d CPUs, %d bytes; want job %d, 4 CPUs, 8 GiB", l.JobID, l.CPUs, l.MemBytes, whole)
	}
	if j := tc.job(whole); j.CPUs != 4 || j.Spec.CPUs != 1 || j.State != api.StateRunning {
		t.Errorf("job record: %s, CPUs %d (asked %d)", j.State, j.CPUs, j.Spec.CPUs)
	}
	if n := tc.node("n1"); n.AllocCPUs != 4 {
		t.Errorf("node n1 allocates %d CPUs, want all 4", n.AllocCPUs)
	}

	later := tc.submit(script("later"))
	tc.waitJob(later, "a job to wait for the exclusive one", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	n1.noLaunch()
	if err := n1.end(whole, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := n1.waitLaunch(); l.JobID != later || l.CPUs != 1 {
		t.Fatalf("launch %+v, want job %d on 1 CPU", l, later)
	}
}

// --mem=0 gives a job all of each node's memory (and only the CPUs it
// asks for); combined with a per-CPU amount it is refused at submit.
func TestMemZeroTakesTheNodesMemory(t *testing.T) {
	tc := MustServer(t)
	n1 := newFakeNode(tc, "n1", 4, 6<<30)
	n1.register()
	spec := script("allmem")
	spec.MemBytes, spec.MemWholeNode = 0, true
	id := tc.submit(spec)
	l := n1.waitLaunch()
	if l.JobID != id || l.CPUs != 1 || l.MemBytes != 6<<30 {
		t.Fatalf("launch: job %d, %d CPUs, %d bytes; want job %d, 1 CPU, 6 GiB", l.JobID, l.CPUs, l.MemBytes, id)
	}
	if j := tc.job(id); j.MemBytes != 6<<30 || j.Spec.MemBytes != 0 {
		t.Errorf("job record: mem %d (spec %d)", j.MemBytes, j.Spec.MemBytes)
	}

	bad := spec
	bad.MemPerCPU = 1 << 30
	_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: bad})
	if statusOf(err) != 400 || !strings.Contains(err.Error(), "--mem=0 (all of each node's memory) and --mem-per-cpu cannot be combined") {
		t.Errorf("--mem=0 with --mem-per-cpu: %v", err)
	}
	mcs := exclusiveJob("mcs", "mcs")
	_, err = tc.client.Submit(context.Background(), api.SubmitRequest{Spec: mcs})
	if statusOf(err) != 400 || !strings.Contains(err.Error(), "--exclusive=mcs: corral has no MCS labels") {
		t.Errorf("--exclusive=mcs: %v", err)
	}
}

// --exclusive=user: the user's own jobs join it on its node, another
// user's job waits for it.
func TestExclusiveUserInTheController(t *testing.T) {
	tc := MustServer(t)
	n1 := newFakeNode(tc, "n1", 4, 8<<30)
	n1.register()
	mine := tc.submit(exclusiveJob("mine", "user"))
	if l := n1.waitLaunch(); l.JobID != mine || l.CPUs != 1 {
		t.Fatalf("launch %+v, want job %d on 1 CPU", l, mine)
	}
	owner := uint32(nobody)
	theirs, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("theirs"), OnBehalfOf: &owner})
	if err != nil {
		t.Skipf("needs root and a nobody account: %v", err)
	}
	tc.waitJob(theirs, "another user's job to wait", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	n1.noLaunch()
	also := tc.submit(script("also-mine"))
	if l := n1.waitLaunch(); l.JobID != also {
		t.Fatalf("launch of job %d, want the same user's job %d", l.JobID, also)
	}
	if err := n1.end(mine, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := n1.waitLaunch(); l.JobID != theirs {
		t.Fatalf("launch of job %d, want %d once the --exclusive=user job ended", l.JobID, theirs)
	}
}

// OverSubscribe=EXCLUSIVE gives every job of the partition whole nodes;
// -s is kept only where the partition says YES.
func TestPartitionOverSubscribe(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=whole Nodes=n1 Default=YES OverSubscribe=EXCLUSIVE\n"+
		"PartitionName=shared Nodes=n2 OverSubscribe=YES\nPartitionName=plain Nodes=n2\n"))
	n1 := newFakeNode(tc, "n1", 4, 8<<30)
	n1.register()
	id := tc.submit(script("any"))
	if l := n1.waitLaunch(); l.JobID != id || l.CPUs != 4 {
		t.Fatalf("launch %+v, want job %d on all 4 CPUs", l, id)
	}
	if j := tc.job(id); j.Spec.Exclusive != "node" {
		t.Errorf("a job of an EXCLUSIVE partition has exclusive %q", j.Spec.Exclusive)
	}
	for part, want := range map[string]bool{"shared": true, "plain": false} {
		spec := script("s")
		spec.Partition, spec.OverSubscribe = part, true
		resp, err := tc.client.TestSubmit(context.Background(), api.SubmitRequest{Spec: spec})
		if err != nil || resp.Job.Spec.OverSubscribe != want {
			t.Errorf("-s in partition %s: kept %v, want %v (%v)", part, resp.Job.Spec.OverSubscribe, want, err)
		}
	}
}

// An exclusive job gets every GPU of its node whole, though it asked for
// none; requeued, it goes back to what it asked for, and a second run
// gets the whole node again.
func TestExclusiveJobGetsEveryGPUAndIsRequeuedAsAsked(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	g1 := MustGPUNode(tc, "g1", a100s(2, false), 0)
	id := tc.submit(exclusiveJob("gpus", "node"))
	l := g1.waitLaunch()
	if l.JobID != id || l.CPUs != 8 || len(l.GPUs) != 2 || l.GPUs[0].AmountHundredths != 100 || l.GPUs[1].AmountHundredths != 100 {
		t.Fatalf("launch: job %d, %d CPUs, GPUs %+v; want job %d on 8 CPUs and both GPUs whole", l.JobID, l.CPUs, l.GPUs, id)
	}
	tc.waitAcked(id)
	if resp := tc.control("requeue", id); len(resp.Done) != 1 {
		t.Fatalf("requeue: %+v", resp)
	}
	if err := g1.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	j := tc.job(id)
	if j.State != api.StatePending || j.CPUs != 1 || len(j.GPUAlloc) != 0 {
		t.Errorf("requeued job: %s, %d CPUs, GPUs %+v; want pending with the 1 CPU it asked for and none", j.State, j.CPUs, j.GPUAlloc)
	}
	g1.register() // a heartbeat without the old run lets it start again
	if l := g1.waitLaunch(); l.JobID != id || l.CPUs != 8 || len(l.GPUs) != 2 {
		t.Fatalf("second launch: job %d, %d CPUs, GPUs %+v", l.JobID, l.CPUs, l.GPUs)
	}
}

// An exclusive job's --mem-per-cpu counts every CPU of a node: one no
// node could hold that way is refused at submit.
func TestExclusiveMemPerCPUMustFit(t *testing.T) {
	tc := MustServer(t)
	newFakeNode(tc, "n1", 4, 8<<30).register()
	spec := exclusiveJob("big", "node")
	spec.MemPerCPU, spec.MemBytes = 4<<30, 4<<30
	_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
	want := "--exclusive gives the job all of a node's CPUs, and --mem-per-cpu=4G for each is more than any node of partition batch has (largest: 8G for 4 CPUs): it could never run"
	if statusOf(err) != 400 || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want 400 %q", err, want)
	}
	spec.MemPerCPU, spec.MemBytes = 2<<30, 2<<30
	id := tc.submit(spec)
	if j := tc.waitJob(id, "the job to start", inState(api.StateRunning)); j.MemBytes != 8<<30 || j.CPUs != 4 {
		t.Errorf("started with %d CPUs and %d bytes, want 4 and 8 GiB", j.CPUs, j.MemBytes)
	}
}
