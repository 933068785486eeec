package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

var (
	t0  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now = t0.Add(time.Hour)
)

// jobIn is a job as the controller would have it in state st.
func jobIn(st api.JobState) api.Job {
	j := api.Job{ID: 7, User: "alice", State: api.StatePending, Reason: api.ReasonNone, SubmitTime: t0,
		TimeLimit: 60, History: []api.Transition{{State: api.StatePending, Time: t0}}}
	if st == api.StatePending {
		return j
	}
	start := t0.Add(time.Minute)
	j.State, j.StartTime, j.Nodes = api.StateRunning, &start, []string{"n1", "n2"}
	j.History = append(j.History, api.Transition{State: api.StateRunning, Reason: api.ReasonNone, Time: start})
	if st == api.StateRunning {
		return j
	}
	end, code := start.Add(time.Minute), 0
	j.State, j.EndTime, j.ExitCode = st, &end, &code
	j.History = append(j.History, api.Transition{State: st, Reason: api.ReasonNone, Time: end})
	return j
}

// eventOf is an event of kind k that is valid wherever k is allowed.
func eventOf(k Kind) Event {
	ev := Event{Kind: k, Message: "why"}
	switch k {
	case Start:
		ev.Nodes = []string{"n3"}
	case End, Timeout, EndRequeue:
		ev.State, ev.ExitCode, ev.At = api.StateCancelled, 143, now.Add(-time.Second)
	case Release:
		ev.ByOperator = true
	}
	return ev
}

// rows is the lifecycle as users know it, written out apart from the
// package's table: every allowed (state, event) and where it leads.
var rows = map[api.JobState]map[Kind]api.JobState{
	api.StatePending: {Start: api.StateRunning, Cancel: api.StateCancelled, Hold: api.StatePending, Release: api.StatePending},
	api.StateRunning: {Configuring: api.StateRunning, Configured: api.StateRunning, End: api.StateCancelled,
		Timeout: api.StateTimeout, EndRequeue: api.StatePending, Cancel: api.StateCancelled, NodeFail: api.StateNodeFail,
		NodeFailRequeue: api.StatePending, Requeue: api.StatePending, LaunchFailed: api.StatePending,
		LaunchRefused: api.StateFailed, Suspend: api.StateSuspended, Hold: api.StateRunning, Release: api.StateRunning},
	api.StateSuspended: {Resume: api.StateRunning, End: api.StateCancelled, EndRequeue: api.StatePending, Cancel: api.StateCancelled,
		NodeFail: api.StateNodeFail, NodeFailRequeue: api.StatePending, Requeue: api.StatePending,
		Hold: api.StateSuspended, Release: api.StateSuspended},
}

func TestEveryStateAndEvent(t *testing.T) {
	for _, st := range api.AllStates {
		for _, k := range Kinds() {
			job := jobIn(st)
			if k == Release {
				job.Hold, job.Reason = HoldUser, api.ReasonJobHeld
			}
			before := job
			before.History = slices.Clone(job.History)
			want, allowed := rows[st][k]
			if st.Terminal() && k == Requeue {
				want, allowed = api.StatePending, true
			}
			next, err := Next(job, eventOf(k), now)
			switch {
			case !allowed && err == nil:
				t.Errorf("%s on %s: allowed (-> %s), want refused", k, st, next.State)
			case !allowed && !errors.Is(err, fault.Conflict):
				t.Errorf("%s on %s: refused with %v (kind %v), want a conflict", k, st, err, fault.KindOf(err))
			case !allowed && (next.State != st || len(next.History) != len(before.History)):
				t.Errorf("%s on %s: refused but changed the job", k, st)
			case !allowed && len(Allowed(st, k)) != 0:
				t.Errorf("Allowed(%s, %s) = %v, want none", st, k, Allowed(st, k))
			case allowed && err != nil:
				t.Errorf("%s on %s: %v, want -> %s", k, st, err, want)
			case allowed && next.State != want:
				t.Errorf("%s on %s -> %s, want %s", k, st, next.State, want)
			case allowed && !slices.Contains(Allowed(st, k), want):
				t.Errorf("Allowed(%s, %s) = %v, lacks %s", st, k, Allowed(st, k), want)
			}
			if !slices.Equal(job.History, before.History) {
				t.Errorf("%s on %s: the input job's history was changed", k, st)
			}
		}
	}
}

// Every (from, to) pair of states: reachable by some event, or by none.
func TestEveryStatePair(t *testing.T) {
	reach := func(from, to api.JobState) bool {
		switch {
		case from == api.StatePending:
			return to == api.StatePending || to == api.StateRunning || to == api.StateCancelled
		case from == api.StateRunning:
			return true // configuring, suspended, every end a node may report, back to PENDING
		case from == api.StateSuspended:
			return true // resumed, every end a node may report, back to PENDING, held in place
		}
		return to == api.StatePending // a finished job can only be requeued
	}
	for _, from := range api.AllStates {
		for _, to := range api.AllStates {
			by := []Kind{}
			for _, k := range Kinds() {
				if slices.Contains(Allowed(from, k), to) {
					by = append(by, k)
				}
			}
			if want := reach(from, to); (len(by) > 0) != want {
				t.Errorf("%s -> %s: by %v, want reachable %v", from, to, by, want)
			}
		}
	}
}

func TestStart(t *testing.T) {
	job := jobIn(api.StatePending)
	job.Message, job.PlannedNodes = "launch on n9 failed", []string{"n9"}
	next, err := Next(job, Event{Kind: Start, Nodes: []string{"n3"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.StartTime == nil || !next.StartTime.Equal(now) || next.Message != "" || next.PlannedNodes != nil ||
		!slices.Equal(next.Nodes, []string{"n3"}) || next.History[len(next.History)-1] != (api.Transition{State: api.StateRunning, Reason: api.ReasonNone, Time: now}) {
		t.Errorf("started job %+v", next)
	}
}

func TestNodeEnds(t *testing.T) {
	at := now.Add(-time.Second)
	job := jobIn(api.StateRunning)
	for _, tc := range []struct {
		kind      Kind
		reported  api.JobState
		wantState api.JobState
		wantMsg   string
	}{
		{End, api.StateOutOfMemory, api.StateOutOfMemory, "why"},
		{End, "EXPLODED", api.StateFailed, "node reported end state EXPLODED; recorded as FAILED: why"},
		{Timeout, api.StateCancelled, api.StateTimeout, "why"},
	} {
		next, err := Next(job, Event{Kind: tc.kind, At: at, State: tc.reported, ExitCode: 9, Signal: 15, Message: "why"}, now)
		if err != nil {
			t.Fatal(err)
		}
		last := next.History[len(next.History)-1]
		if next.State != tc.wantState || last.State != tc.wantState || !last.Time.Equal(at) || !next.EndTime.Equal(at) ||
			*next.ExitCode != 9 || next.Signal != 15 || next.Message != tc.wantMsg {
			t.Errorf("%s %s: %+v", tc.kind, tc.reported, next)
		}
	}
	next, err := Next(job, Event{Kind: EndRequeue, At: at, State: api.StateCancelled, ExitCode: 143, Message: "signalled"}, now)
	if err != nil {
		t.Fatal(err)
	}
	h := next.History[len(next.History)-2:]
	if h[0].State != api.StateRequeued || !h[0].Time.Equal(at) || h[1].State != api.StatePending || !h[1].Time.Equal(now) ||
		next.Restarts != 1 || len(next.Runs) != 1 || *next.Runs[0].ExitCode != 143 || next.Runs[0].Message != "signalled" ||
		!next.Runs[0].EndTime.Equal(at) || next.StartTime != nil || next.ExitCode != nil {
		t.Errorf("end of a requeued run: %+v", next)
	}
}

func TestRequeue(t *testing.T) {
	done, err := Next(jobIn(api.StateCompleted), Event{Kind: Requeue}, now)
	if err != nil {
		t.Fatal(err)
	}
	if done.Runs[0].State != api.StateCompleted || done.History[len(done.History)-2].State != api.StateCompleted {
		t.Errorf("requeue of a finished job: %+v", done)
	}
	lost, err := Next(jobIn(api.StateRunning), Event{Kind: NodeFailRequeue, Message: "node n1 is not responding"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r := lost.Runs[0]; r.State != api.StateNodeFail || !r.EndTime.Equal(now) || r.Message != "node n1 is not responding" ||
		lost.History[len(lost.History)-2].State != api.StateNodeFail {
		t.Errorf("requeue on node failure: %+v", lost)
	}
	// The run keeps the GPU shares it held (a part of it still stopping
	// holds them again after a controller restart); the job lets go.
	onGPU := jobIn(api.StateRunning)
	onGPU.Nodes = []string{"g1"}
	onGPU.GPUAlloc = []api.NodeGPUs{{Node: "g1", Shares: []api.GPUShare{{Device: 1, AmountHundredths: 100}}, FGPUPerGPUHundredths: 100}}
	again, err := Next(onGPU, Event{Kind: Requeue}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r := again.Runs[0]; len(r.GPUAlloc) != 1 || r.GPUAlloc[0].Shares[0].Device != 1 || r.GPUs != 1 || again.GPUAlloc != nil {
		t.Errorf("requeue of a job on a GPU: run %+v, job's shares %+v", r, again.GPUAlloc)
	}
}

func TestLaunchFailuresHold(t *testing.T) {
	job := jobIn(api.StatePending)
	for i := 1; i <= MaxLaunchFailures; i++ {
		var err error
		if job, err = Next(job, Event{Kind: Start, Nodes: []string{"n1"}}, now); err != nil {
			t.Fatal(err)
		}
		if job, err = Next(job, Event{Kind: LaunchFailed, Message: "launch on n1 failed: EOF"}, now); err != nil {
			t.Fatal(err)
		}
		if held := job.Hold == HoldAdmin; held != (i == MaxLaunchFailures) {
			t.Fatalf("after %d failures: hold %q", i, job.Hold)
		}
	}
	if job.Reason != api.ReasonJobHeldAdmin || job.StartTime != nil ||
		job.Message != "launch on n1 failed: EOF; held after 3 failed launches in a row (an operator may release it)" {
		t.Errorf("held job %+v", job)
	}
}

func TestCancelKeepsReason(t *testing.T) {
	plain, err := Next(jobIn(api.StateRunning), Event{Kind: Cancel}, now)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Reason != api.ReasonNone || plain.History[len(plain.History)-1].Reason != api.ReasonNone || plain.ExitCode != nil {
		t.Errorf("a plain cancel: reason %q, history %+v, exit code %v", plain.Reason, plain.History, plain.ExitCode)
	}
	next, err := Next(jobIn(api.StatePending), Event{Kind: Cancel, Reason: api.ReasonDependencyNeverSatisfied, Message: "never"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Reason != api.ReasonDependencyNeverSatisfied || next.History[len(next.History)-1].Reason != api.ReasonDependencyNeverSatisfied ||
		next.Message != "never" || !next.EndTime.Equal(now) {
		t.Errorf("cancelled job %+v", next)
	}
}

func TestHoldAndRelease(t *testing.T) {
	job := jobIn(api.StatePending)
	for _, tc := range []struct {
		hold     string
		ev       Event
		wantHold string
		wantErr  string
		wantKind fault.Kind
	}{
		{"", Event{Kind: Hold}, HoldUser, "", 0},
		{"", Event{Kind: Hold, ByOperator: true}, HoldAdmin, "", 0},
		{HoldAdmin, Event{Kind: Hold}, "", "job 7 is already held by an operator or root", fault.Conflict},
		{"", Event{Kind: Release}, "", "", 0}, // a no-op, as Slurm's
		{HoldAdmin, Event{Kind: Release}, "", "only an operator, administrator or root may release it", fault.Forbidden},
		{HoldAdmin, Event{Kind: Release, ByOperator: true}, "", "", 0},
	} {
		job.Hold = tc.hold
		next, err := Next(job, tc.ev, now)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || fault.KindOf(err) != tc.wantKind):
			t.Errorf("%s of hold %q: %v, want %v %q", tc.ev.Kind, tc.hold, err, tc.wantKind, tc.wantErr)
		case tc.wantErr == "" && (err != nil || next.Hold != tc.wantHold || len(next.History) != len(job.History)):
			t.Errorf("%s of hold %q: %v, hold %q, want %q and no history entry", tc.ev.Kind, tc.hold, err, next.Hold, tc.wantHold)
		}
	}
	// A running job is held in place, its reason untouched; requeued, it
	// waits held, as Slurm's.
	run := jobIn(api.StateRunning)
	held, err := Next(run, Event{Kind: Hold, ByOperator: true}, now)
	if err != nil || held.State != api.StateRunning || held.Hold != HoldAdmin || held.Reason != run.Reason || len(held.History) != len(run.History) {
		t.Errorf("hold of a running job: %+v, %v", held, err)
	}
	back, err := Next(held, Event{Kind: Requeue}, now)
	if err != nil || back.State != api.StatePending || back.Hold != HoldAdmin {
		t.Errorf("requeue of a held running job: %s hold %q, %v", back.State, back.Hold, err)
	}
	if _, err := Next(jobIn(api.StateCompleted), Event{Kind: Hold}, now); err == nil || err.Error() != "job 7 already finished (COMPLETED)" {
		t.Errorf("hold of a finished job: %v", err)
	}
}

// launchFailures counts only the failures since the last submit, requeue
// or hold.
func TestLaunchFailuresCount(t *testing.T) {
	p := func(r api.Reason) api.Transition { return api.Transition{State: api.StatePending, Reason: r} }
	run := api.Transition{State: api.StateRunning}
	for _, c := range []struct {
		h    []api.Transition
		want int
	}{
		{[]api.Transition{p(api.ReasonNone)}, 0},
		{[]api.Transition{p(api.ReasonNone), run, p(api.ReasonLaunchFailed)}, 1},
		{[]api.Transition{p(api.ReasonNone), run, p(api.ReasonLaunchFailed), run, p(api.ReasonLaunchFailed)}, 2},
		{[]api.Transition{p(api.ReasonLaunchFailed), run, p(api.ReasonJobHeldAdmin), run, p(api.ReasonLaunchFailed)}, 1},
		{[]api.Transition{run, p(api.ReasonLaunchFailed), run, {State: api.StateRequeued}, p(api.ReasonNone), run}, 0},
	} {
		if got := launchFailures(&api.Job{History: c.h}); got != c.want {
			t.Errorf("launchFailures(%v) = %d, want %d", c.h, got, c.want)
		}
	}
}

// A submitted job starts PENDING with one history entry, whatever state
// fields the request's copy carried, and held by its owner when asked;
// the table then takes it from there (a held job is released by Release).
func TestNew(t *testing.T) {
	in := api.Job{ID: 9, User: "alice", State: api.StateRunning, Reason: api.ReasonJobHeldAdmin, Hold: HoldAdmin,
		History: []api.Transition{{State: api.StateRunning}}}
	j := New(in, false, now)
	if j.State != api.StatePending || j.Reason != api.ReasonNone || j.Hold != "" || !j.SubmitTime.Equal(now) {
		t.Fatalf("New = state %s reason %q hold %q submit %v", j.State, j.Reason, j.Hold, j.SubmitTime)
	}
	if want := []api.Transition{{State: api.StatePending, Time: now}}; !slices.Equal(j.History, want) {
		t.Fatalf("history %v, want %v", j.History, want)
	}
	if j.ID != 9 || j.User != "alice" {
		t.Fatalf("New lost the request's fields: %+v", j)
	}
	held := New(in, true, now)
	if held.State != api.StatePending || held.Hold != HoldUser || held.Reason != api.ReasonJobHeld {
		t.Fatalf("held New = state %s hold %q reason %q", held.State, held.Hold, held.Reason)
	}
	rel, err := Next(held, Event{Kind: Release}, now)
	if err != nil || rel.Hold != "" || rel.State != api.StatePending {
		t.Fatalf("releasing a new held job: %+v, %v", rel, err)
	}
	if len(in.History) != 1 || in.History[0].State != api.StateRunning {
		t.Fatalf("New changed its argument's history: %v", in.History)
	}
}

// Suspended time is kept apart from run time: each resume adds the
// stretch to SuspendedSecs, an end while suspended adds the last one, and
// a new run starts from none.
func TestSuspendResume(t *testing.T) {
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	job, err := Next(jobIn(api.StatePending), Event{Kind: Start, Nodes: []string{"n1"}}, at(0))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		kind Kind
		s    int
		want api.JobState
		secs int64
	}{{Suspend, 10, api.StateSuspended, 0}, {Resume, 40, api.StateRunning, 30}, {Suspend, 50, api.StateSuspended, 30}, {Cancel, 70, api.StateCancelled, 50}}
	for _, st := range steps {
		if job, err = Next(job, Event{Kind: st.kind}, at(st.s)); err != nil {
			t.Fatalf("%s: %v", st.kind, err)
		}
		if job.State != st.want || job.SuspendedSecs != st.secs {
			t.Errorf("after %s at %ds: %s, suspended %ds; want %s, %ds", st.kind, st.s, job.State, job.SuspendedSecs, st.want, st.secs)
		}
	}
	if job.SuspendTime == nil || !job.SuspendTime.Equal(at(50)) {
		t.Errorf("SuspendTime %v, want the last suspend", job.SuspendTime)
	}
	requeued, err := Next(job, Event{Kind: Requeue}, at(80))
	if err != nil || requeued.SuspendTime != nil || requeued.SuspendedSecs != 0 {
		t.Errorf("requeued: %v, suspend time %v, %ds: a new run starts with none", err, requeued.SuspendTime, requeued.SuspendedSecs)
	}
}
