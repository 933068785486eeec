package ctld

import (
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// requeueChange is job id's requeue after a run on onNode (Restarts up).
func requeueChange(id uint64, onNode string) change {
	old := &job{rec: store.JobRecord{Job: api.Job{ID: id, State: api.StateRunning, Nodes: []string{onNode}}}}
	next := old.rec
	next.Job.State, next.Job.Restarts, next.Job.Nodes = api.StatePending, 1, nil
	return change{old, next}
}

// A requeued job avoids the node of its last run until that node reports
// without it, and never starts while the old run may still be alive; the
// pipeline state alone decides this, without a server.
func TestPipelineRequeueAvoidance(t *testing.T) {
	var p pipeline
	p.init()
	nodes := newNodeRegistry()
	nodes.put("n1", &node{up: true, reported: []uint64{7}}) // still lists job 7
	nodes.put("n2", &node{up: true})
	nodes.put("n3", &node{up: true})

	p.observe(requeueChange(7, "n1"))
	if p.mayStart(7, []string{"n1"}, nodes) {
		t.Fatal("job 7 may start on n1, the node of the run it was requeued from")
	}
	if p.mayStart(7, []string{"n2"}, nodes) {
		t.Fatal("job 7 may start on n2 while n1 still lists its earlier run")
	}
	if p.reported("n1", []uint64{7}) {
		t.Fatal("n1 still lists job 7, yet reported says its avoidance ended")
	}
	if !p.mayStart(8, []string{"n2"}, nodes) {
		t.Fatal("job 8, never requeued, may not start on n2")
	}

	// n1 registers without job 7: the old run is gone.
	nodes.get("n1").reported = nil
	if !p.reported("n1", nil) {
		t.Fatal("n1 reported without job 7, but the avoidance was not freed (no kick)")
	}
	if !p.mayStart(7, []string{"n1"}, nodes) || !p.mayStart(7, []string{"n2", "n3"}, nodes) {
		t.Fatal("job 7 still may not start once n1 stopped listing it")
	}

	// A node that is DOWN may still run the old job unseen.
	p.observe(requeueChange(9, "n3"))
	nodes.get("n3").up = false
	if p.mayStart(9, []string{"n2"}, nodes) {
		t.Fatal("job 9 may start while the node of its earlier run is DOWN")
	}
	// An end forgets the avoidance.
	c := requeueChange(9, "n3")
	c.j.rec.Job.Restarts, c.next.Job.State = 1, api.StateCancelled
	p.observe(c)
	if _, ok := p.avoid[9]; ok {
		t.Fatal("job 9 ended but its avoidance stays")
	}
}

// wakeWaiters closes the channel waiters hold and gives later waiters a
// fresh one; noteWake keeps a wake time but never clears one with 0.
func TestPipelineWakes(t *testing.T) {
	var p pipeline
	p.init()
	held := p.ended
	p.wakeWaiters()
	select {
	case <-held:
	default:
		t.Fatal("wakeWaiters left a waiter's channel open")
	}
	select {
	case <-p.ended:
		t.Fatal("the next waiters' channel is already closed")
	default:
	}
	p.noteWake(42)
	p.noteWake(0)
	if got := p.wakeAt.Load(); got != 42 {
		t.Fatalf("wakeAt = %d, want 42", got)
	}
}
