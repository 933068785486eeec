package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// stepCluster is a controller with n fake nodes of 4 CPUs, and a job of
// uidOwner's running on all of them; the nodes come in the job's order.
func stepCluster(t *testing.T, n int) (*testCluster, []*fakeNode, uint64) {
	t.Helper()
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf))
	var nodes []*fakeNode
	for i := range n {
		f := newFakeNode(tc, fmt.Sprintf("n%d", i+1), 4, 8<<30)
		f.register()
		nodes = append(nodes, f)
	}
	no := false
	spec := api.JobSpec{Name: "alloc", Script: "#!/bin/sh\nsleep 100\n", Nodes: n, CPUs: 4, MemBytes: 1 << 30, WorkDir: "/tmp", Requeue: &no}
	id := tc.submitFor(uidOwner, spec)
	for _, f := range nodes {
		if l := f.waitLaunch(); l.JobID != id {
			t.Fatalf("node %s launched job %d, want %d", f.name, l.JobID, id)
		}
	}
	j := tc.waitJob(id, "running", inState(api.StateRunning))
	slices.SortFunc(nodes, func(a, b *fakeNode) int { return slices.Index(j.Nodes, a.name) - slices.Index(j.Nodes, b.name) })
	return tc, nodes, id
}

// askStep sends srun's request as uid; it returns the grant, or the
// status and body of a refusal.
func askStep(t *testing.T, tc *testCluster, uid uint32, id uint64, req api.StepRequest) (api.StepGrant, int, string) {
	t.Helper()
	code, body := callAs(t, tc, uid, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/steps", id), req)
	var g api.StepGrant
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &g); err != nil {
			t.Fatalf("grant: %v: %s", err, body)
		}
	}
	return g, code, string(body)
}

func mustStep(t *testing.T, tc *testCluster, uid uint32, id uint64, req api.StepRequest) api.StepGrant {
	t.Helper()
	g, code, body := askStep(t, tc, uid, id, req)
	if code != http.StatusOK {
		t.Fatalf("step in job %d: %d %s", id, code, body)
	}
	return g
}

// stepsOf lists a job's steps as its owner sees them.
func stepsOf(t *testing.T, tc *testCluster, id uint64) []api.Step {
	t.Helper()
	code, body := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", id), nil)
	var out []api.Step
	if code != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("steps of job %d: %d %s", id, code, body)
	}
	return out
}

func stepOf(t *testing.T, tc *testCluster, id uint64, step int) api.Step {
	t.Helper()
	for _, s := range stepsOf(t, tc, id) {
		if s.StepID == step {
			return s
		}
	}
	t.Fatalf("job %d has no step %d", id, step)
	return api.Step{}
}

// stepEnded reports that a step's tasks on node f ended.
func (f *fakeNode) stepEnded(id uint64, step, exit int) {
	f.t.Helper()
	ev := api.JobEvent{JobID: id, StepID: step, Node: f.name, Kind: api.EventStepEnded, Time: time.Now(),
		ExitCode: exit, CPUTimeUsec: 1000, PeakMemBytes: 2048}
	if err := f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
		f.t.Fatalf("step end from %s: %v", f.name, err)
	}
}

// A job's owner gets a step: laid out, committed RUNNING, with a
// credential the node can verify. Another user is refused and nothing
// is committed; so are a pending job, an unknown one and a step larger
// than the allocation.
func TestStepCreatedForTheJobsOwner(t *testing.T) {
	tc, nodes, id := stepCluster(t, 1)
	g := mustStep(t, tc, uidOwner, id, api.StepRequest{Name: "hostname", Ntasks: 2})
	if g.Step.StepID != 0 || g.Step.State != api.StateRunning || g.Step.Tasks != 2 || g.Step.Name != "hostname" ||
		len(g.Layout) != 1 || !slices.Equal(g.Layout[0].Ranks, []int{0, 1}) || g.Layout[0].CPUs != 4 ||
		g.Layout[0].Addr != nodes[0].srv.URL {
		t.Fatalf("grant = %+v", g)
	}
	if g.CAPEM != "" {
		t.Fatalf("a plaintext cluster sent a CA: %q", g.CAPEM)
	}
	c := g.Credential
	if c.UID != uidOwner || c.JobID != id || c.StepID != 0 || c.Tasks != 2 || !c.Expires.After(time.Now()) {
		t.Fatalf("credential = %+v", c)
	}
	if _, err := api.VerifyCredential(&c, tc.srv.key, "n1", time.Now()); err != nil {
		t.Fatalf("the node would refuse the credential: %v", err)
	}

	for _, tt := range []struct {
		name string
		uid  uint32
		job  uint64
		req  api.StepRequest
		code int
		want string
	}{
		{"another user", nobody, id, api.StepRequest{Overlap: true}, http.StatusForbidden, "Access/permission denied"},
		{"an unknown job", uidOwner, id + 100, api.StepRequest{}, http.StatusNotFound, "Invalid job id specified"},
		{"more CPUs than the allocation", uidOwner, id, api.StepRequest{Ntasks: 5, Overlap: true}, http.StatusBadRequest,
			fmt.Sprintf("Unable to create step for job %d: More processors requested than permitted", id)},
		{"a second whole-node step beside the first", uidOwner, id, api.StepRequest{}, http.StatusConflict, "Requested nodes are busy"},
	} {
		if _, code, body := askStep(t, tc, tt.uid, tt.job, tt.req); code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, code, body, tt.code, tt.want)
		}
	}
	if got := stepsOf(t, tc, id); len(got) != 1 {
		t.Fatalf("refused steps were committed: %+v", got)
	}
	// An admin may start a step in anyone's job; --overlap shares the CPUs.
	if g := mustStep(t, tc, uidAdmin, id, api.StepRequest{Overlap: true}); g.Step.StepID != 1 {
		t.Fatalf("admin's step = %+v, want step 1", g.Step)
	}

	// A show of the job lists its running steps; a listing does not.
	if _, body := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/jobs/%d", id), nil); !strings.Contains(string(body), `"steps":[{"job_id"`) {
		t.Fatalf("show of the job lists no steps: %s", body)
	}
	if _, body := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/jobs?id=%d", id), nil); strings.Contains(string(body), `"steps"`) {
		t.Fatalf("a listing carries steps: %s", body)
	}

	pending := tc.submitFor(uidOwner, api.JobSpec{Name: "waits", Script: "#!/bin/sh\n", CPUs: 4, MemBytes: 1 << 20, WorkDir: "/tmp"})
	tc.waitJob(pending, "pending", inState(api.StatePending))
	if _, code, body := askStep(t, tc, uidOwner, pending, api.StepRequest{}); code != http.StatusConflict || !strings.Contains(body, "Job is pending execution") {
		t.Fatalf("step in a pending job: %d %s", code, body)
	}
}

// Each node's end report is counted once however often it arrives; the
// step ends when every node of it has reported: COMPLETED, or FAILED with
// the highest exit code.
func TestStepEndsWhenEveryNodeReported(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	g := mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 4})
	if len(g.Layout) != 2 {
		t.Fatalf("layout = %+v", g.Layout)
	}
	nodes[0].stepEnded(id, 0, 0)
	nodes[0].stepEnded(id, 0, 0) // delivered twice
	if st := stepOf(t, tc, id, 0); st.State != api.StateRunning {
		t.Fatalf("step ended with one node of two reported: %+v", st)
	}
	nodes[1].stepEnded(id, 0, 3)
	st := stepOf(t, tc, id, 0)
	if st.State != api.StateFailed || st.ExitCode != 3 || st.End == nil || st.CPUTimeUsec != 2000 || st.PeakMemBytes != 2048 {
		t.Fatalf("step after both reports = %+v", st)
	}
	nodes[1].stepEnded(id, 0, 0) // again: the end stands
	if again := stepOf(t, tc, id, 0); again.State != api.StateFailed || !again.End.Equal(*st.End) {
		t.Fatalf("a repeated report changed the ended step: %+v", again)
	}
	// Its CPUs are free again: a whole-node step fits; the next ID is 1.
	g = mustStep(t, tc, uidOwner, id, api.StepRequest{Nodes: 1})
	if g.Step.StepID != 1 || g.Layout[0].Node != nodes[0].name {
		t.Fatalf("next step = %+v", g.Step)
	}
	nodes[0].stepEnded(id, 1, 0)
	if st := stepOf(t, tc, id, 1); st.State != api.StateCompleted {
		t.Fatalf("step 1 = %+v", st)
	}
}

// stepKilled reports that a step's tasks on node f were killed with
// their job's container (SIGTERM), as noded reports it: CANCELLED.
func (f *fakeNode) stepKilled(id uint64, step int) {
	f.t.Helper()
	ev := api.JobEvent{JobID: id, StepID: step, Node: f.name, Kind: api.EventStepEnded, Time: time.Now(),
		State: api.StateCancelled, ExitCode: 143, Signal: 15}
	if err := f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
		f.t.Fatalf("step end from %s: %v", f.name, err)
	}
}

// Running steps, their held CPUs and the step sequence survive a restart
// of the controller. The job's end leaves its running steps RUNNING,
// marked with the job's end in the same commit, and that too survives a
// restart; they end when their node reports, CANCELLED 0:15 for tasks
// killed with the job, as Slurm's sacct shows them.
func TestStepsSurviveARestartAndEndWithTheirJob(t *testing.T) {
	tc, nodes, id := stepCluster(t, 1)
	mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 1, Exact: true})
	mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 3, Exact: true})
	nodes[0].stepEnded(id, 1, 0)
	tc.Restart()
	nodes[0].register()
	if _, code, body := askStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 4, Exact: true}); code != http.StatusConflict {
		t.Fatalf("after a restart, step 0's CPU is not held: %d %s", code, body)
	}
	if g := mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 3, Exact: true}); g.Step.StepID != 2 {
		t.Fatalf("step after a restart = %d, want 2", g.Step.StepID)
	}
	if err := nodes[0].end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	waiting := func(when string) {
		t.Helper()
		for _, st := range stepsOf(t, tc, id) {
			if want := st.StepID != 1; (st.State == api.StateRunning) != want {
				t.Fatalf("%s: step %d is %s; waiting for its node: %v", when, st.StepID, st.State, want)
			}
		}
		running, err := tc.srv.q.store.RunningSteps()
		if err != nil || len(running) != 2 || running[0].JobEnd == nil || running[0].JobEnd.State != api.StateCompleted {
			t.Fatalf("%s: stored running steps %+v, %v; want steps 0 and 2 marked with the job's end", when, running, err)
		}
	}
	waiting("after the job's end")
	tc.Restart()
	nodes[0].register()
	waiting("after a restart")
	nodes[0].stepKilled(id, 0)
	nodes[0].stepKilled(id, 2)
	for _, st := range stepsOf(t, tc, id) {
		want, sig := api.StateCancelled, 15
		if st.StepID == 1 {
			want, sig = api.StateCompleted, 0
		}
		if st.State != want || st.End == nil || st.ExitCode != 0 || st.Signal != sig {
			t.Errorf("step %d after its node reported: %s %d:%d, want %s 0:%d", st.StepID, st.State, st.ExitCode, st.Signal, want, sig)
		}
	}
	// Accounting lists the steps under their job, after its batch and
	// extern parts.
	code, body := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/acct?id=%d", id), nil)
	var recs []api.AcctRecord
	if code != http.StatusOK || json.Unmarshal(body, &recs) != nil || len(recs) != 1 || len(recs[0].Steps) != 5 ||
		recs[0].Steps[0].StepID != api.StepBatch || recs[0].Steps[0].State != api.StateCompleted ||
		recs[0].Steps[1].StepID != api.StepExtern || recs[0].Steps[1].State != api.StateCompleted ||
		recs[0].Steps[3].StepID != 1 || recs[0].Steps[3].State != api.StateCompleted {
		t.Fatalf("accounting: %d %s", code, body)
	}
	if running, _ := tc.srv.q.store.RunningSteps(); len(running) != 0 {
		t.Fatalf("running steps left in the store: %+v", running)
	}
	if _, code, body := askStep(t, tc, uidOwner, id, api.StepRequest{}); code != http.StatusConflict || !strings.Contains(body, "already completing or completed") {
		t.Fatalf("step in an ended job: %d %s", code, body)
	}
}

// A lost node ends its job NODE_FAIL, and the job's running steps with it.
func TestStepOfALostNodeEndsNodeFail(t *testing.T) {
	tc, _, id := stepCluster(t, 1)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	if code, body := callAs(t, tc, 0, http.MethodPost, "/v1/nodes/down", api.DownRequest{Nodes: []string{"n1"}, Reason: "test"}); code != http.StatusOK {
		t.Fatalf("down: %d %s", code, body)
	}
	tc.waitJob(id, "node fail", inState(api.StateNodeFail))
	if st := stepOf(t, tc, id, 0); st.State != api.StateNodeFail {
		t.Fatalf("step of a lost node = %s", st.State)
	}
}

// Cancelling a step tells its nodes; a node that still runs it reports
// its end (CANCELLED), one that does not know it is done at once.
func TestStepCancel(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	nodes[0].set(func(f *fakeNode) { f.steps = []api.NodeStep{{JobID: id, StepID: 0}} })
	cancel := func(uid uint32) (int, string) {
		code, body := callAs(t, tc, uid, http.MethodPost, "/v1/steps/cancel", api.StepCancelRequest{JobID: id, StepID: 0})
		return code, string(body)
	}
	if code, body := cancel(nobody); code != http.StatusForbidden {
		t.Fatalf("another user's cancel: %d %s", code, body)
	}
	if code, body := cancel(uidOwner); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, body)
	}
	for _, f := range nodes {
		waitFor(t, "step cancel on "+f.name, func() bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			return slices.Contains(f.stepKills, api.StepCancelRequest{JobID: id, StepID: 0})
		})
	}
	// The second node does not know the step: its part is over; the
	// first one's end is awaited.
	waitFor(t, "n2's part recorded", func() bool {
		tc.srv.mu.RLock()
		defer tc.srv.mu.RUnlock()
		rec := tc.srv.q.job(id).steps.running[0]
		return rec != nil && len(rec.Reports) == 1 && rec.Reports[0].Node == nodes[1].name
	})
	nodes[0].stepEnded(id, 0, 143)
	if st := stepOf(t, tc, id, 0); st.State != api.StateCancelled {
		t.Fatalf("cancelled step = %+v", st)
	}
	if code, _ := cancel(uidOwner); code != http.StatusNotFound {
		t.Fatalf("cancel of an ended step: %d", code)
	}
}

// noneAsked fails when a node was asked which steps it knows.
func noneAsked(t *testing.T, nodes []*fakeNode, what string) {
	t.Helper()
	for _, f := range nodes {
		f.mu.Lock()
		asked := f.stepLists
		f.mu.Unlock()
		if asked != 0 {
			t.Fatalf("node %s asked about %s", f.name, what)
		}
	}
}

// A step srun never launched on a node (its credential expired unused)
// has that part ended by the sweep, once the node does not list it; a
// node that lists the step keeps it.
func TestStepNeverLaunchedIsSwept(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	nodes[0].set(func(f *fakeNode) { f.steps = []api.NodeStep{{JobID: id, StepID: 0}} })
	stepSweep{tc.srv}.run(time.Now()) // too young: no node is asked (and no goroutine started)
	noneAsked(t, nodes, "a step that may still be launched")
	tc.srv.mu.Lock()
	rec := *tc.srv.q.job(id).steps.running[0]
	rec.Step.Start = rec.Step.Start.Add(-stepCredentialLifetime - stepLaunchGrace - time.Second)
	tc.srv.q.job(id).steps.running[0] = &rec
	tc.srv.mu.Unlock()
	stepSweep{tc.srv}.run(time.Now())
	waitFor(t, "the second node's part recorded", func() bool {
		tc.srv.mu.RLock()
		defer tc.srv.mu.RUnlock()
		r := tc.srv.q.job(id).steps.running[0]
		return r != nil && len(r.Reports) == 1 && r.Reports[0].Node == nodes[1].name && r.Reports[0].State == api.StateFailed
	})
	nodes[0].set(func(f *fakeNode) { f.steps = nil })
	stepSweep{tc.srv}.run(time.Now())
	waitFor(t, "the step ended", func() bool { return stepOf(t, tc, id, 0).State == api.StateFailed })
}

// backdateJobEnd moves the job's end of step 0 of job id, waiting for
// its nodes, back by d, as if that much time had passed.
func backdateJobEnd(tc *testCluster, id uint64, d time.Duration) {
	tc.srv.mu.Lock()
	defer tc.srv.mu.Unlock()
	rec := *tc.srv.q.job(id).steps.running[0]
	end := *rec.JobEnd
	end.At = end.At.Add(-d)
	rec.JobEnd = &end
	tc.srv.q.job(id).steps.running[0] = &rec
}

// A step waiting for its nodes after its job's end ends NODE_FAIL when a
// node that has not reported is lost (here set DOWN).
func TestStepWaitingAfterItsJobEndsNodeFailWithALostNode(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	if err := nodes[0].end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	nodes[0].stepKilled(id, 0)
	if st := stepOf(t, tc, id, 0); st.State != api.StateRunning {
		t.Fatalf("step with one node of two reported after its job's end: %+v", st)
	}
	if code, body := callAs(t, tc, 0, http.MethodPost, "/v1/nodes/down", api.DownRequest{Nodes: []string{nodes[1].name}, Reason: "test"}); code != http.StatusOK {
		t.Fatalf("down: %d %s", code, body)
	}
	if st := stepOf(t, tc, id, 0); st.State != api.StateNodeFail || st.End == nil {
		t.Fatalf("step after its silent node was lost: %+v", st)
	}
	if j := tc.job(id); j.State != api.StateCompleted {
		t.Fatalf("the job's own end changed to %s", j.State)
	}
}

// The sweep asks a node that has not reported a step stepEndAsk after
// its job's end whether it knows the step: one that does not has its
// part counted over (CANCELLED, at the job's end); past stepEndWait the
// step ends whatever its nodes say, its silent node counted CANCELLED.
func TestStepWaitingAfterItsJobIsSwept(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	nodes[0].set(func(f *fakeNode) { f.steps = []api.NodeStep{{JobID: id, StepID: 0}} })
	if err := nodes[0].end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	stepSweep{tc.srv}.run(time.Now()) // too early: nobody is asked
	noneAsked(t, nodes, "a step right after its job's end")
	backdateJobEnd(tc, id, stepEndAsk)
	stepSweep{tc.srv}.run(time.Now())
	waitFor(t, "the second node's part recorded", func() bool {
		tc.srv.mu.RLock()
		defer tc.srv.mu.RUnlock()
		r := tc.srv.q.job(id).steps.running[0]
		return r != nil && len(r.Reports) == 1 && r.Reports[0].Node == nodes[1].name && r.Reports[0].State == api.StateCancelled
	})
	backdateJobEnd(tc, id, stepEndWait)
	stepSweep{tc.srv}.run(time.Now())
	st := stepOf(t, tc, id, 0)
	tc.srv.mu.RLock()
	end := tc.srv.q.closing
	tc.srv.mu.RUnlock()
	if st.State != api.StateCancelled || st.End == nil || !st.End.Before(time.Now().Add(-stepEndWait)) || len(end) != 0 {
		t.Fatalf("step past the bound: %+v (closing %v), want CANCELLED at its job's end", st, end)
	}
	if l := tc.logs.String(); !strings.Contains(l, "did not report within") {
		t.Fatalf("the log does not say why the step ended:\n%s", l)
	}
}

// A step waiting for its nodes after its job's end is still listed, as
// Slurm 22.05 lists the steps of a completing job (checked on the
// loopback Slurm: `srun bash -c 'trap "sleep 6; exit 0" TERM; sleep 100 &
// wait' &` in a script that exits: while the job is CG, `squeue -s -O
// StepId,StepState` shows the step RUNNING, its time counting): the
// listing of jobs with steps (squeue -s) has its job, whose show lists
// the step RUNNING, until its last node reported.
func TestStepWaitingAfterItsJobIsListed(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	listed := func(path string) []uint64 {
		t.Helper()
		code, body := callAs(t, tc, uidOwner, http.MethodGet, path, nil)
		var jobs []api.Job
		if code != http.StatusOK || json.Unmarshal(body, &jobs) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		var ids []uint64
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids
	}
	if got := listed("/v1/jobs?steps=1"); !slices.Equal(got, []uint64{id}) {
		t.Fatalf("jobs with steps while the job runs: %v, want [%d]", got, id)
	}
	if err := nodes[0].end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	nodes[0].stepKilled(id, 0)
	if got := listed("/v1/jobs?steps=1"); !slices.Equal(got, []uint64{id}) {
		t.Fatalf("jobs with steps after the job's end, a node of its step silent: %v, want [%d]", got, id)
	}
	if err := nodes[1].end(id, api.StateCancelled, 0); err != nil { // its part on n2 stopped: no longer COMPLETING
		t.Fatal(err)
	}
	if got := listed("/v1/jobs"); len(got) != 0 {
		t.Fatalf("the plain listing has the finished job: %v", got)
	}
	code, body := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/jobs/%d", id), nil)
	var j api.Job
	if code != http.StatusOK || json.Unmarshal(body, &j) != nil || len(j.Steps) != 1 || j.Steps[0].State != api.StateRunning {
		t.Fatalf("show of the finished job: %d %s; want its step RUNNING", code, body)
	}
	nodes[1].stepKilled(id, 0)
	if got := listed("/v1/jobs?steps=1"); len(got) != 0 {
		t.Fatalf("jobs with steps once every node reported: %v, want none", got)
	}
	if code, body := callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs?steps=1&state=RUNNING", nil); code != http.StatusBadRequest {
		t.Fatalf("steps=1 with a state: %d %s, want 400", code, body)
	}
}
