package ctld

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// A job of two nodes that ended on its batch host is COMPLETING until its
// other part has stopped: that node is not given to the next job, which
// would be launched onto cores the node still uses (and whose refusal
// would take the node DOWN), and the job is listed CG with the
// unfinished ones. The part's end report frees the node.
func TestEndedJobHoldsItsOtherNodeUntilItsPartStops(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	next := tc.submitFor(uidOwner, twoNodeSpec()) // both nodes, whole
	if err := n1.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	j := tc.waitJob(id, "completed", inState(api.StateCompleted))
	if !j.Completing || j.DisplayState() != "CG" || !slices.Equal(j.CompletingNodes, []string{n2.name}) {
		t.Fatalf("ended job with its part on %s still running: completing=%v on %v, shown %s", n2.name, j.Completing, j.CompletingNodes, j.DisplayState())
	}
	waitSignalled(t, n2, id)
	// A cycle after the end planned the next job (a start due now: the
	// part is overdue) and did not start it.
	p := tc.waitJob(next, "planned", func(j api.Job) bool { return j.PlannedStart != nil })
	if p.State != api.StatePending {
		t.Fatalf("next job %s while %s still runs the ended job's part", p.State, n2.name)
	}
	n1.noLaunch()
	n2.noLaunch()
	code, body := callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs", nil)
	var listed []api.Job
	if code != http.StatusOK || json.Unmarshal(body, &listed) != nil {
		t.Fatalf("GET /v1/jobs: %d %s", code, body)
	}
	if i := slices.IndexFunc(listed, func(l api.Job) bool { return l.ID == id }); i < 0 || !listed[i].Completing {
		t.Fatalf("the listing of unfinished jobs lacks the completing job %d: %s", id, body)
	}
	for _, c := range []struct {
		query string
		want  []uint64
	}{{"?state=PD&completing=1", []uint64{id, next}}, {"?state=PD", []uint64{next}}, {"?state=R&completing=1", []uint64{id}},
		{"?completing=1", []uint64{id}}, {"", []uint64{id, next}}} {
		code, body := callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs"+c.query, nil)
		var got []api.Job
		if code != http.StatusOK || json.Unmarshal(body, &got) != nil {
			t.Fatalf("GET /v1/jobs%s: %d %s", c.query, code, body)
		}
		var ids []uint64
		for _, j := range got {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("GET /v1/jobs%s: %v, want %v", c.query, ids, c.want)
		}
	}
	code, body = callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs?completing=1&limit=10", nil)
	var page api.JobPage
	if code != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != id {
		t.Errorf("a page of the completing jobs: %d %s", code, body)
	}
	if code, body := callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs?steps=1&completing=1", nil); code != http.StatusBadRequest {
		t.Errorf("steps=1&completing=1: %d %s, want 400", code, body)
	}
	if v := tc.node(n2.name); !slices.Contains(v.RunningJobs, id) || v.AllocCPUs != 4 || v.State != api.NodeCompleting || !v.Completing {
		t.Fatalf("node %s while it stops the part: %s (completing=%v), jobs %v, %d CPUs allocated", n2.name, v.State, v.Completing, v.RunningJobs, v.AllocCPUs)
	}
	if v := tc.node(n1.name); slices.Contains(v.RunningJobs, id) || v.AllocCPUs != 0 || v.Completing {
		t.Fatalf("node %s after its part ended: jobs %v, %d CPUs allocated", n1.name, v.RunningJobs, v.AllocCPUs)
	}

	if err := n2.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*fakeNode{n1, n2} {
		if l := f.waitLaunch(); l.JobID != next {
			t.Fatalf("node %s launched job %d, want %d", f.name, l.JobID, next)
		}
	}
	if j := tc.job(id); j.Completing || j.State != api.StateCompleted {
		t.Fatalf("job once every part ended: %s completing=%v", j.State, j.Completing)
	}
}

// completedOn is a finished job of cpus CPUs per node on nodes, started
// at start and ended a minute later, tracked by q.
func completedOn(q *queue, id uint64, cpus int, start time.Time, nodes ...string) *job {
	end := start.Add(time.Minute)
	j := &job{rec: store.JobRecord{Job: api.Job{ID: id, State: api.StateCompleted, CPUs: cpus,
		Nodes: nodes, StartTime: &start, EndTime: &end}}}
	q.track(j)
	return j
}

// stoppingOn lists the nodes where job id has parts stopping.
func stoppingOn(q *queue, id uint64) []string {
	var out []string
	for k := range q.stoppingParts() {
		if k.id == id {
			out = append(out, k.node)
		}
	}
	slices.Sort(out)
	return out
}

// Heartbeats decide for the parts no end report speaks for: a finished
// job a node lists past the grace after its end (one cancelled while
// its node was away, or any after a controller restart) is held there; a
// stopping part its node no longer lists is gone. The planner and the
// starts see what is held.
func TestHeartbeatsHoldAndFreeFinishedJobsParts(t *testing.T) {
	q := newQueue()
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	grace := 5 * time.Second
	j := completedOn(q, 7, 3, start, "n1", "n2")
	end := *j.rec.Job.EndTime

	// Listed just after its end: perhaps an end not yet acknowledged.
	if q.reconcileParts("n2", []uint64{7}, false, end.Add(time.Second), grace); j.rec.Job.Completing {
		t.Fatal("a heartbeat just after the end held the job")
	}
	// The first registration of a node that comes up (a controller
	// restart) holds it at once.
	fresh := completedOn(q, 9, 2, start, "n1", "n5")
	if q.reconcileParts("n5", []uint64{9}, true, end.Add(time.Second), grace); !fresh.rec.Job.Completing {
		t.Fatal("a node that came up listing a finished job does not hold it")
	}
	if !q.reconcileParts("n5", nil, false, end.Add(time.Minute), grace) || fresh.rec.Job.Completing {
		t.Fatal("its next heartbeat without the job did not free it")
	}
	if q.reconcileParts("n2", []uint64{7}, false, end.Add(grace+time.Second), grace); !j.rec.Job.Completing || !slices.Equal(stoppingOn(q, 7), []string{"n2"}) {
		t.Fatalf("listed past the grace: completing=%v on %v, want on n2", j.rec.Job.Completing, stoppingOn(q, 7))
	}
	if got := q.allocation()["n2"].CPUs; got != 3 {
		t.Fatalf("n2 allocated %d CPUs, want the part's 3", got)
	}
	running, _ := q.runningAndPending(nil)
	if len(running) != 1 || running[0].ID != 7 || len(running[0].Alloc) != 1 || running[0].Alloc[0].Node != "n2" ||
		!running[0].End.Equal(end) {
		t.Fatalf("the planner's running jobs: %+v", running)
	}
	// Another node's heartbeat, and a report from before the run's start
	// (an earlier run's part), change nothing.
	early := []api.JobEvent{{JobID: 7, Node: "n2", Kind: api.EventEnded, Time: start.Add(-time.Second)}}
	if q.reconcileParts("n1", nil, false, end.Add(time.Hour), grace) || q.partsEnded(early) || !j.rec.Job.Completing {
		t.Fatal("n1's heartbeat or an earlier run's end freed the part on n2")
	}
	if !q.reconcileParts("n2", nil, false, end.Add(time.Hour), grace) || j.rec.Job.Completing || j.stoppingOn != nil || j.rec.Job.CompletingNodes != nil {
		t.Fatalf("n2 no longer lists it: completing=%v on %v (%v)", j.rec.Job.Completing, j.stoppingOn, j.rec.Job.CompletingNodes)
	}
	if running, _ := q.runningAndPending(nil); len(running) != 0 || q.allocation()["n2"].CPUs != 0 {
		t.Fatalf("after the part stopped: running %+v, n2 allocated %d", running, q.allocation()["n2"].CPUs)
	}

	// A node going DOWN holds nothing; one part left of two keeps the job.
	run := j.rec.Job
	q.holdParts(j, &run, []string{"n1", "n2"}, end)
	q.partsGoneOn(map[string]bool{"n1": true})
	if !slices.Equal(stoppingOn(q, 7), []string{"n2"}) || !j.rec.Job.Completing || !slices.Equal(j.rec.Job.CompletingNodes, []string{"n2"}) {
		t.Fatalf("after n1 went down: stopping on %v (shown %v), want n2", stoppingOn(q, 7), j.rec.Job.CompletingNodes)
	}
	// A heartbeat built before the launch lists nothing: within the grace
	// after the start it frees nothing.
	young := completedOn(q, 8, 1, end.Add(time.Hour), "n2", "n3")
	yrun := young.rec.Job
	q.holdParts(young, &yrun, []string{"n3"}, *yrun.EndTime)
	if q.reconcileParts("n3", nil, false, yrun.StartTime.Add(time.Second), grace) || !young.rec.Job.Completing {
		t.Fatal("a heartbeat within the grace after the start freed the part")
	}
	// A requeue (PENDING again) keeps its old run's part: the job shows CG
	// until it is gone, and, started again elsewhere, R.
	requeued := j.rec
	requeued.Job.State, requeued.Job.Nodes, requeued.Job.CPUs = api.StatePending, nil, 0
	j.rec = requeued
	q.track(j)
	q.noteCompleting(j)
	if !j.rec.Job.Completing || j.rec.Job.DisplayState() != "CG" || q.allocation()["n2"].CPUs != 3 {
		t.Fatalf("requeued with its part on n2 stopping: completing=%v, shown %s, n2 allocated %d",
			j.rec.Job.Completing, j.rec.Job.DisplayState(), q.allocation()["n2"].CPUs)
	}
	restarted := j.rec
	restarted.Job.State, restarted.Job.Nodes = api.StateRunning, []string{"n4"}
	j.rec = restarted
	q.track(j)
	q.noteCompleting(j)
	if j.rec.Job.Completing || q.allocation()["n2"].CPUs != 3 {
		t.Fatalf("running again elsewhere: completing=%v, n2 allocated %d, want false and the old part's 3",
			j.rec.Job.Completing, q.allocation()["n2"].CPUs)
	}
}

// A part that ended at the time limit while the job still ran (every
// node enforces the limit) is not waited for when the batch part's
// TIMEOUT ends the job.
func TestPartEndedAtTheLimitIsNotWaitedFor(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	if err := n2.end(id, api.StateTimeout, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("the extern part's TIMEOUT ended the job: %s", j.State)
	}
	if err := n1.end(id, api.StateTimeout, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.waitJob(id, "timed out", inState(api.StateTimeout)); j.Completing {
		t.Fatal("the job is COMPLETING though both its parts reported their ends")
	}
}

// A requeued job of two nodes is pending again at its batch part's
// report, while its part on the other node is still being stopped: that
// part holds its node as a finished job's would, and the job shows CG
// until it is gone.
func TestRequeuedJobsOldPartHoldsItsNode(t *testing.T) {
	spec := twoNodeSpec()
	yes := true
	spec.Requeue = &yes
	tc, n1, n2, id, _, _ := twoNodeJob(t, spec)
	if resp := tc.control("requeue", id); len(resp.Done) != 1 {
		t.Fatalf("requeue: %+v", resp)
	}
	other := tc.submitFor(uidOwner, twoNodeSpec())
	if err := n1.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	j := tc.waitJob(id, "pending again", inState(api.StatePending))
	if !j.Completing || j.DisplayState() != "CG" {
		t.Fatalf("requeued with its part on %s stopping: completing=%v, shown %s", n2.name, j.Completing, j.DisplayState())
	}
	if v := tc.node(n2.name); v.AllocCPUs != 4 || !slices.Contains(v.RunningJobs, id) {
		t.Fatalf("node %s while it stops the old run's part: jobs %v, %d CPUs allocated", n2.name, v.RunningJobs, v.AllocCPUs)
	}
	// The first cycle after the end planned both and started neither.
	tc.waitJob(id, "planned", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	if o := tc.job(other); o.State != api.StatePending {
		t.Fatalf("job %d %s while %s still stops job %d's part", other, o.State, n2.name, id)
	}
	n1.noLaunch()
	n2.noLaunch()
	if err := n2.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	n1.register() // neither lists it: the requeued job may run there again
	n2.register()
	l1, l2 := n1.waitLaunch(), n2.waitLaunch()
	if l1.JobID != l2.JobID {
		t.Fatalf("after the old part stopped, n1 launched job %d and n2 job %d", l1.JobID, l2.JobID)
	}
	if j := tc.job(id); j.Completing {
		t.Fatal("still COMPLETING once every part of its run stopped")
	}
}

// After a controller restart nothing of the parts stopping is known; the
// nodes' first registrations say which are: a node that comes up still
// listing a finished job holds its part until it stops.
func TestRestartedControllerHoldsThePartsNodesStillRun(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	if err := n1.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	tc.Restart()
	n1.register()
	n2.register() // its part of the job is still stopping
	if j := tc.job(id); !j.Completing {
		t.Fatalf("after the restart, with %s still running the job's part: completing=%v", n2.name, j.Completing)
	}
	next := tc.submitFor(uidOwner, twoNodeSpec())
	tc.waitJob(next, "planned", func(j api.Job) bool { return j.PlannedStart != nil })
	n1.noLaunch()
	n2.noLaunch()
	if err := n2.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*fakeNode{n1, n2} {
		if l := f.waitLaunch(); l.JobID != next {
			t.Fatalf("node %s launched job %d, want %d", f.name, l.JobID, next)
		}
	}
}

// A stopping part holds its GPUs too: the next job that needs that
// node's GPU waits for the part's end, and the node's fGPU shows it
// allocated meanwhile.
func TestStoppingPartHoldsItsGPUs(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	g1, g2 := MustGPUNode(tc, "g1", a100s(1, false), 200), MustGPUNode(tc, "g2", a100s(1, false), 200)
	spec := script("gpus")
	spec.Nodes, spec.CPUs = 2, 1
	spec.GPUsPerNode = []api.GresRequest{{Name: "gpu", Count: 1}}
	first := tc.submit(spec)
	l1, l2 := g1.waitLaunch(), g2.waitLaunch()
	if l1.JobID != first || l2.JobID != first || len(l1.GPUs) != 1 || len(l2.GPUs) != 1 {
		t.Fatalf("launches %d %+v, %d %+v", l1.JobID, l1.GPUs, l2.JobID, l2.GPUs)
	}
	j := tc.waitJob(first, "running", inState(api.StateRunning))
	batch, other := g1, g2
	if j.Nodes[0] == "g2" {
		batch, other = g2, g1
	}
	next := tc.submit(spec)
	if err := batch.end(first, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(next, "planned", func(j api.Job) bool { return j.PlannedStart != nil })
	g1.noLaunch()
	g2.noLaunch()
	if v := tc.node(other.name); v.AllocFGPUHundredths != 200 || !tc.job(first).Completing {
		t.Fatalf("node %s while the part stops: fGPU %d/%d allocated", other.name, v.AllocFGPUHundredths, v.FGPUHundredths)
	}
	if err := other.end(first, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*fakeNode{g1, g2} {
		if l := f.waitLaunch(); l.JobID != next || len(l.GPUs) != 1 {
			t.Fatalf("node %s launched job %d with %+v, want job %d on its GPU", f.name, l.JobID, l.GPUs, next)
		}
	}
}

// A requeued job a node still lists when it comes up (its old run's part
// still stopping across a controller restart) is held there from that
// run's record, though the job's own record no longer names the node.
func TestHeartbeatHoldsARequeuedJobsOldRun(t *testing.T) {
	q := newQueue()
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	shares := []api.NodeGPUs{{Node: "n2", Shares: []api.GPUShare{{Device: 0, AmountHundredths: 100}}, FGPUPerGPUHundredths: 100}}
	j := &job{rec: store.JobRecord{Job: api.Job{ID: 5, State: api.StatePending, CPUs: 2,
		Runs: []api.JobRun{{State: api.StateRequeued, StartTime: start, EndTime: start.Add(time.Minute), Nodes: []string{"n1", "n2"},
			GPUAlloc: shares}}}}}
	q.track(j)
	if q.reconcileParts("n3", []uint64{5}, true, start.Add(2*time.Minute), 5*time.Second); j.rec.Job.Completing {
		t.Fatal("held on a node its run never ran on")
	}
	q.reconcileParts("n2", []uint64{5}, true, start.Add(2*time.Minute), 5*time.Second)
	if !j.rec.Job.Completing || !slices.Equal(j.rec.Job.CompletingNodes, []string{"n2"}) || q.allocation()["n2"].CPUs != 2 {
		t.Fatalf("requeued job listed by n2 as it came up: completing=%v on %v, n2 allocated %d",
			j.rec.Job.Completing, j.rec.Job.CompletingNodes, q.allocation()["n2"].CPUs)
	}
	if held := q.heldGPUs()["n2"]; len(held) != 1 || held[0].Share.Device != 0 {
		t.Fatalf("the old run's part holds %+v of n2's GPUs, want its share of device 0", held)
	}
	if !q.reconcileParts("n2", nil, false, start.Add(3*time.Minute), 5*time.Second) || j.rec.Job.Completing {
		t.Fatal("n2's next heartbeat without it did not free it")
	}
}
