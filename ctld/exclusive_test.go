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
