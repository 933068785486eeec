package ctld

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sched"
)

// eventsOnly makes the timer so slow that only events can trigger cycles.
func eventsOnly(c *Config) { c.SchedInterval = time.Hour }

func TestThirdJobStartsWhenResourcesFree(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	ids := []uint64{tc.submit(script("a")), tc.submit(script("b")), tc.submit(script("c"))}
	// The first two by submit order start; their launches go out
	// concurrently, so they may arrive in either order.
	first, second := node.waitLaunch(), node.waitLaunch()
	if first.JobID > second.JobID {
		first, second = second, first
	}
	if first.JobID != ids[0] || second.JobID != ids[1] {
		t.Fatalf("launched %d and %d, want %d and %d (the first two submitted)", first.JobID, second.JobID, ids[0], ids[1])
	}
	third := tc.waitJob(ids[2], "reason Resources", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	if third.State != api.StatePending || third.StartTime != nil {
		t.Fatalf("third job: %+v", third)
	}
	node.noLaunch()
	// The launch carries everything the node needs.
	if first.CPUs != 1 || first.MemBytes != 1<<20 || first.Script != "#!/bin/sh\ntrue\n" || first.WorkDir != "/tmp" ||
		first.User == "" || first.Home == "" || first.Partition != "batch" || strings.Join(first.NodeList, ",") != "n1" || first.Name != "a" {
		t.Fatalf("launch request: %+v", first)
	}
	running := tc.job(ids[0])
	if running.State != api.StateRunning || running.StartTime == nil || strings.Join(running.Nodes, ",") != "n1" ||
		running.History[len(running.History)-1].State != api.StateRunning {
		t.Fatalf("running job: %+v", running)
	}
	// An end event frees a CPU; with the timer off only that event can
	// start the third job.
	if err := node.end(ids[0], api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != ids[2] {
		t.Fatalf("launched %d, want %d", l.JobID, ids[2])
	}
	done := tc.job(ids[0])
	if done.State != api.StateCompleted || done.ExitCode == nil || *done.ExitCode != 0 || len(done.History) != 3 {
		t.Fatalf("completed job: %+v", done)
	}
}

func TestRestartKeepsEveryJob(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 1, 4<<30)
	node.register()
	completed := tc.submit(script("done"))
	node.waitLaunch()
	if err := node.end(completed, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	running := tc.submit(script("run"))
	node.waitLaunch()
	pending := tc.submit(script("wait"))
	cancelled := tc.submit(script("nope"))
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{cancelled}}); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(pending, "pending reason", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	before := make(map[uint64]api.Job)
	for _, id := range []uint64{completed, running, pending, cancelled} {
		before[id] = tc.job(id)
	}

	tc.Restart()
	for id, want := range before {
		got := tc.job(id)
		if got.ID != want.ID || got.State != want.State || got.Name != want.Name || len(got.History) != len(want.History) ||
			!got.SubmitTime.Equal(want.SubmitTime) {
			t.Errorf("job %d after restart: %s %q history %d; before %s %q history %d",
				id, got.State, got.Name, len(got.History), want.State, want.Name, len(want.History))
		}
	}
	// The node is known but DOWN until it registers again.
	if n := tc.node("n1"); n.State != api.NodeDown || n.CPUs != 1 {
		t.Fatalf("node after restart: %+v", n)
	}
	if next := tc.submit(script("next")); next != cancelled+1 {
		t.Fatalf("next ID %d, want %d", next, cancelled+1)
	}
	// The node returns still running its job: nothing is killed or lost.
	if resp := node.register(); len(resp.Kill) != 0 {
		t.Fatalf("Kill = %v after restart", resp.Kill)
	}
	if j := tc.job(running); j.State != api.StateRunning {
		t.Fatalf("running job became %s", j.State)
	}
	if err := node.end(running, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != pending {
		t.Fatalf("launched %d, want the pending job %d", l.JobID, pending)
	}
}

func TestFailedLaunchRequeues(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.LaunchFailureHold = 200 * time.Millisecond })
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) { f.refuse = true })
	node.register()
	id := tc.submit(script("bounce"))
	j := tc.waitJob(id, "requeue", func(j api.Job) bool { return j.Reason == api.ReasonLaunchFailed })
	if j.State != api.StatePending || j.StartTime != nil || len(j.Nodes) != 0 || !strings.Contains(j.Message, "node is draining") {
		t.Fatalf("requeued job: %+v", j)
	}
	h := j.History
	if len(h) < 3 || h[1].State != api.StateRunning || h[2].State != api.StatePending || h[2].Reason != api.ReasonLaunchFailed {
		t.Fatalf("history %+v", h)
	}
	if n := tc.node("n1"); n.State != api.NodeDown || !strings.HasPrefix(n.Reason, "launch failed") {
		t.Fatalf("node after failed launch: %+v", n)
	}
	// Heartbeats during the hold do not bring it back; after it they do,
	// and the job starts.
	node.set(func(f *fakeNode) { f.refuse = false })
	node.register()
	if n := tc.node("n1"); n.State != api.NodeDown {
		t.Fatalf("node up during hold: %s", n.State)
	}
	time.Sleep(250 * time.Millisecond)
	node.register()
	if l := node.waitLaunch(); l.JobID != id {
		t.Fatalf("launched %d, want %d", l.JobID, id)
	}
	tc.waitJob(id, "RUNNING", func(j api.Job) bool { return j.State == api.StateRunning && j.Message == "" })
}

func TestLostLaunchAnswer(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) { f.dropReply = true })
	node.register()
	// The node takes the job but its answer is lost: ctld asks the node
	// (GET /v1/jobs), finds the job there, and keeps it RUNNING.
	id := tc.submit(script("accepted"))
	node.waitLaunch()
	tc.waitAcked(id)
	if j := tc.job(id); j.State != api.StateRunning || j.Message != "" {
		t.Fatalf("job after a lost launch answer: %s %q", j.State, j.Message)
	}
	if n := tc.node("n1"); n.State == api.NodeDown {
		t.Fatalf("node marked down: %+v", n)
	}
	// Without the job on the node, the same broken answer requeues it.
	node.set(func(f *fakeNode) { f.forget = true })
	id2 := tc.submit(script("lost"))
	node.waitLaunch()
	tc.waitJob(id2, "requeue", func(j api.Job) bool { return j.Reason == api.ReasonLaunchFailed })
}

func TestCancelRunning(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	id := tc.submit(script("long"))
	node.waitLaunch()
	tc.waitAcked(id) // else the stop is sent twice (TestStopDuringLaunchIsRepeated)
	resp, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}})
	if err != nil || len(resp.Cancelled) != 1 || len(resp.Errors) != 0 {
		t.Fatalf("cancel = %+v, %v", resp, err)
	}
	if sig := node.signalled(); len(sig) != 1 || sig[0] != id {
		t.Fatalf("signals = %v", sig)
	}
	// It ends when the node says so.
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("signalled job is %s before the node reported", j.State)
	}
	if err := node.end(id, api.StateCancelled, 143); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateCancelled {
		t.Fatalf("after end: %s", j.State)
	}

	// Unreachable node: CANCELLED at once; told to kill it on return.
	id2 := tc.submit(script("orphan"))
	node.waitLaunch()
	tc.waitAcked(id2)
	node.srv.Close()
	resp, err = tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id2}})
	if err != nil || len(resp.Cancelled) != 1 {
		t.Fatalf("cancel with node unreachable = %+v, %v", resp, err)
	}
	j := tc.job(id2)
	if j.State != api.StateCancelled || j.EndTime == nil || !strings.Contains(j.Message, "could not be signalled") {
		t.Fatalf("job on unreachable node: %+v", j)
	}
	if r := node.register(); len(r.Kill) != 1 || r.Kill[0] != id2 {
		t.Fatalf("Kill on return = %v, want [%d]", r.Kill, id2)
	}
}

// recordingPlanner wraps FirstFit and keeps the snapshots it was given.
type recordingPlanner struct {
	mu    sync.Mutex
	snaps []sched.Snapshot
}

func (p *recordingPlanner) Plan(s sched.Snapshot) sched.Plan {
	p.mu.Lock()
	p.snaps = append(p.snaps, s)
	p.mu.Unlock()
	return sched.FirstFit{}.Plan(s)
}

func (p *recordingPlanner) last() sched.Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snaps[len(p.snaps)-1]
}

var _ sched.Planner = (*recordingPlanner)(nil)

func TestSnapshotAndMultiNodeJobs(t *testing.T) {
	planner := &recordingPlanner{}
	tc := MustServer(t, eventsOnly, func(c *Config) { c.Planner = planner },
		withPartitions("PartitionName=p Nodes=n[1-2] MaxTime=2:00:00\n"))
	n1, n2 := newFakeNode(tc, "n1", 4, 8<<30), newFakeNode(tc, "n2", 4, 8<<30)
	n1.register()
	n2.register()
	id := tc.submit(api.JobSpec{Script: "x", Nodes: 2, CPUs: 3, MemBytes: 1 << 30, WorkDir: "/", TimeLimit: 600})
	l := n1.waitLaunch() // the batch host runs the script, n2 holds the allocation
	if l.JobID != id || strings.Join(l.NodeList, ",") != "n1,n2" || l.TimeLimit != 600 || l.Role != api.RoleBatch || l.NodeIndex != 0 {
		t.Fatalf("launch %+v", l)
	}
	if l := n2.waitLaunch(); l.JobID != id || l.Role != api.RoleExtern || l.NodeIndex != 1 || strings.Join(l.NodeList, ",") != "n1,n2" {
		t.Fatalf("n2's launch %+v", l)
	}
	waiting := tc.submit(api.JobSpec{Script: "x", CPUs: 2, MemBytes: 1 << 30, WorkDir: "/"})
	tc.waitJob(waiting, "reason", func(j api.Job) bool { return j.Reason == api.ReasonResources })

	s := planner.last()
	if len(s.Nodes) != 2 || len(s.Partitions) != 1 || strings.Join(s.Partitions[0].Nodes, ",") != "n1,n2" ||
		s.Partitions[0].MaxTime != 2*time.Hour {
		t.Fatalf("snapshot nodes/partitions: %+v %+v", s.Nodes, s.Partitions)
	}
	if len(s.Running) != 1 || len(s.Running[0].Alloc) != 2 || s.Running[0].Alloc[1].Resources.CPUs != 3 {
		t.Fatalf("snapshot running: %+v", s.Running)
	}
	if want := tc.job(id).StartTime.Add(10 * time.Minute); !s.Running[0].End.Equal(want) {
		t.Fatalf("running End %v, want start + limit %v", s.Running[0].End, want)
	}
	if len(s.Pending) != 1 || s.Pending[0].ID != waiting || s.Pending[0].TimeLimit != 2*time.Hour ||
		s.Pending[0].PerNode.MemBytes != 1<<30 {
		t.Fatalf("snapshot pending: %+v", s.Pending)
	}
	if n := tc.node("n2"); n.AllocCPUs != 3 || n.State != api.NodeMixed {
		t.Fatalf("n2 holds no allocation: %+v", n)
	}
	// n2 runs the job's extern part: reporting it is no reason to kill it.
	tc.backdateStart(id, time.Hour)
	if r := n2.register(); len(r.Kill) != 0 {
		t.Fatalf("n2 Kill = %v", r.Kill)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("multi-node job judged lost by its second node: %s", j.State)
	}
}
