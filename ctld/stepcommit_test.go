package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// A step's end from its nodes' reports: counted once per node, ended
// when every node reported, in the state and with the exit code Slurm
// gives it; CPU time summed, peak memory the highest.
func TestStepAfterReport(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	two := func(mod func(*store.StepRecord)) *store.StepRecord {
		rec := &store.StepRecord{Step: api.Step{JobID: 7, StepID: 1, State: api.StateRunning},
			Layout: []api.StepNode{{Node: "a"}, {Node: "b"}}}
		if mod != nil {
			mod(rec)
		}
		return rec
	}
	a := store.StepNodeEnd{Node: "a", CPUTimeUsec: 10, PeakMemBytes: 100}
	tests := []struct {
		name    string
		rec     *store.StepRecord
		reports []store.StepNodeEnd // all but the last already in the record
		want    api.JobState        // "": the report changes nothing
		exit    int
		signal  int
	}{
		{"first of two nodes", two(nil), []store.StepNodeEnd{a}, api.StateRunning, 0, 0},
		{"all exit 0", two(nil), []store.StepNodeEnd{a, {Node: "b", CPUTimeUsec: 5, PeakMemBytes: 300}}, api.StateCompleted, 0, 0},
		{"the highest exit code", two(nil), []store.StepNodeEnd{{Node: "a", ExitCode: 2}, {Node: "b", ExitCode: 5}}, api.StateFailed, 5, 0},
		{"a signalled task", two(nil), []store.StepNodeEnd{a, {Node: "b", State: api.StateFailed, ExitCode: 137, Signal: 9}}, api.StateCancelled, 0, 9},
		{"an exit code beats a signal", two(nil), []store.StepNodeEnd{{Node: "a", ExitCode: 1}, {Node: "b", ExitCode: 137, Signal: 9}}, api.StateFailed, 1, 0},
		{"tasks that could not start", two(nil), []store.StepNodeEnd{a, {Node: "b", State: api.StateFailed, Message: "no container"}}, api.StateFailed, 0, 0},
		{"cancelled", two(func(r *store.StepRecord) { r.CancelRequested = true }), []store.StepNodeEnd{a, {Node: "b", ExitCode: 143}}, api.StateCancelled, 143, 0},
		{"a lost node", two(nil), []store.StepNodeEnd{a, {Node: "b", Lost: true}}, api.StateNodeFail, 0, 0},
		// Slurm 22.05 (loopback, task/cgroup, DebugFlags=Steps): a task
		// OOM-killed in `srun -n1 python3 -c 'a = bytearray(400<<20)'` in
		// a --mem=100M job: slurmstepd "Detected 1 oom-kill event(s) in
		// StepId=5.0", REQUEST_STEP_COMPLETE rc=253: OUT_OF_MEMORY 0:125.
		{"OOM kills on a node", two(nil), []store.StepNodeEnd{a, {Node: "b", State: api.StateOutOfMemory, ExitCode: 137, Signal: 9}}, api.StateOutOfMemory, 0, 125},
		{"OOM kills beat a signal", two(nil), []store.StepNodeEnd{{Node: "a", State: api.StateCancelled, ExitCode: 143, Signal: 15}, {Node: "b", State: api.StateOutOfMemory, ExitCode: 137, Signal: 9}}, api.StateOutOfMemory, 0, 125},
		{"an exit code beats OOM kills", two(nil), []store.StepNodeEnd{{Node: "a", State: api.StateFailed, ExitCode: 1}, {Node: "b", State: api.StateOutOfMemory, ExitCode: 137, Signal: 9}}, api.StateFailed, 1, 0},
		{"the same node twice", two(nil), []store.StepNodeEnd{a, a}, "", 0, 0},
		{"a node not in the step", two(nil), []store.StepNodeEnd{{Node: "c"}}, "", 0, 0},
		{"an ended step", two(func(r *store.StepRecord) { r.Step.State = api.StateCompleted }), []store.StepNodeEnd{a}, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec
			last := tt.reports[len(tt.reports)-1]
			rec.Reports = append(rec.Reports, tt.reports[:len(tt.reports)-1]...)
			before := len(rec.Reports)
			next := stepAfterReport(rec, last, at)
			if len(rec.Reports) != before {
				t.Fatal("the record in place was changed")
			}
			if tt.want == "" {
				if next != nil {
					t.Fatalf("report changed the step: %+v", next.Step)
				}
				return
			}
			if next == nil || next.Step.State != tt.want || next.Step.ExitCode != tt.exit || next.Step.Signal != tt.signal {
				t.Fatalf("step = %+v, want %s exit %d signal %d", next, tt.want, tt.exit, tt.signal)
			}
			if tt.want == api.StateRunning {
				if next.Step.End != nil {
					t.Fatal("a running step has an end")
				}
				return
			}
			if next.Step.End == nil || !next.Step.End.Equal(at) {
				t.Fatalf("end = %v, want %v", next.Step.End, at)
			}
			if tt.name == "all exit 0" && (next.Step.CPUTimeUsec != 15 || next.Step.PeakMemBytes != 300) {
				t.Fatalf("tally = %d us, %d bytes", next.Step.CPUTimeUsec, next.Step.PeakMemBytes)
			}
		})
	}
}

// A step still running when its job ends keeps running until its nodes
// have reported, and then ends with its own outcome, as Slurm 22.05
// records such a step (docs/steps.md, "A step when its job ends"): the
// state its reports give, a lost node NODE_FAIL, a node silent past the
// bound CANCELLED. A job that ends NODE_FAIL or is requeued ends its
// steps at once.
func TestStepEndAfterItsJob(t *testing.T) {
	jobEnd := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	killed := func(node string) store.StepNodeEnd { // SIGTERM with the job's container
		return store.StepNodeEnd{Node: node, State: api.StateCancelled, ExitCode: 143, Signal: 15}
	}
	exited := func(node string, code int) store.StepNodeEnd {
		st := api.StateCompleted
		if code != 0 {
			st = api.StateFailed
		}
		return store.StepNodeEnd{Node: node, State: st, ExitCode: code}
	}
	const (
		lostB  = "lost b"  // node b is declared DOWN before it reported
		silent = "silent"  // the bound passes with node b silent
		none   = "nothing" // no more reports
	)
	for _, tc := range []struct {
		name      string
		cancelled bool                // scancel JOB.STEP before the job's end
		before    []store.StepNodeEnd // reported while the job ran
		job       api.JobState        // how the job ended
		after     []store.StepNodeEnd // reported after the job's end
		then      string
		waits     bool // the step still runs right after the job's end
		want      api.JobState
		exit, sig int
	}{
		{"the script exits while the step runs", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{killed("a"), killed("b")}, none, true, api.StateCancelled, 0, 15},
		{"the job's time limit during the step", false, nil, api.StateTimeout,
			[]store.StepNodeEnd{killed("a"), killed("b")}, none, true, api.StateCancelled, 0, 15},
		{"the job cancelled during the step", false, nil, api.StateCancelled,
			[]store.StepNodeEnd{killed("b"), killed("a")}, none, true, api.StateCancelled, 0, 15},
		{"the tasks exited 0 before the job's end, reported after", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{exited("a", 0), exited("b", 0)}, none, true, api.StateCompleted, 0, 0},
		{"the job's time limit killed the tasks before the node saw it end", false, nil, api.StateTimeout,
			[]store.StepNodeEnd{{Node: "a", State: api.StateFailed, ExitCode: 143, Signal: 15}, killed("b")}, none, true, api.StateCancelled, 0, 15},
		{"tasks that stopped with an exit code of their own when the job's end killed them", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{{Node: "a", State: api.StateCancelled, ExitCode: 143}, killed("b")}, none, true, api.StateFailed, 143, 0},
		{"tasks that exited 0 when the job's end told them to stop", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{{Node: "a", State: api.StateCancelled}, {Node: "b", State: api.StateCancelled}}, none, true, api.StateCancelled, 0, 0},
		{"a task failed before the job's end", false, []store.StepNodeEnd{exited("b", 7)}, api.StateCompleted,
			[]store.StepNodeEnd{killed("a")}, none, true, api.StateFailed, 7, 0},
		{"a task failed, reported after the job's end", false, nil, api.StateFailed,
			[]store.StepNodeEnd{exited("a", 3), killed("b")}, none, true, api.StateFailed, 3, 0},
		{"cancelled, then its job ended", true, nil, api.StateCompleted,
			[]store.StepNodeEnd{killed("a"), exited("b", 0)}, none, true, api.StateCancelled, 0, 15},
		{"every node reported before the job's end", false, []store.StepNodeEnd{killed("a"), killed("b")}, api.StateCompleted,
			nil, none, false, api.StateCancelled, 0, 15},
		{"a node lost after the job's end", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{killed("a")}, lostB, true, api.StateNodeFail, 0, 15},
		{"a node that never reports", false, nil, api.StateCompleted,
			[]store.StepNodeEnd{killed("a")}, silent, true, api.StateCancelled, 0, 15},
		{"a failed task and a node that never reports", false, []store.StepNodeEnd{exited("a", 2)}, api.StateCompleted,
			nil, silent, true, api.StateFailed, 2, 0},
		{"the job's node failed", false, []store.StepNodeEnd{exited("a", 7)}, api.StateNodeFail,
			nil, none, false, api.StateNodeFail, 7, 0},
		{"the job requeued", false, nil, api.StatePending,
			nil, none, false, api.StateCancelled, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &store.StepRecord{Step: api.Step{JobID: 7, StepID: 0, State: api.StateRunning, Start: jobEnd.Add(-time.Hour)},
				Layout: []api.StepNode{{Node: "a"}, {Node: "b"}}, CancelRequested: tc.cancelled}
			for _, r := range tc.before {
				rec = stepAfterReport(rec, r, jobEnd.Add(-time.Second))
			}
			j := &job{rec: store.JobRecord{Job: api.Job{ID: 7, State: api.StateRunning}}}
			j.steps.running = map[int]*store.StepRecord{0: rec}
			next := j.rec
			next.Job.State, next.Job.EndTime = tc.job, &jobEnd
			var written []*store.StepRecord
			if !rec.Step.State.Terminal() {
				written = stepsEnding([]change{{j, next}}, nil, time.Now())
				if len(written) != 1 {
					t.Fatalf("the job's end wrote %d step records, want 1", len(written))
				}
				rec = written[0]
			}
			if running := !rec.Step.State.Terminal(); running != tc.waits ||
				(tc.waits && (rec.JobEnd == nil || rec.JobEnd.State != tc.job || !rec.JobEnd.At.Equal(jobEnd) || rec.Step.End != nil)) {
				t.Fatalf("right after the job's end: %s, job end %+v; want waiting %v", rec.Step.State, rec.JobEnd, tc.waits)
			}
			j.rec = next
			j.steps.running = nil
			j.steps.install(rec)
			q := newQueue()
			q.jobs[7] = j
			q.noteClosing(j)
			if _, ok := q.closing[7]; ok != tc.waits {
				t.Fatalf("closing = %v, want %v", q.closing, tc.waits)
			}
			for _, r := range tc.after {
				if n := stepAfterReport(rec, r, jobEnd.Add(time.Second)); n != nil {
					rec = n
				}
			}
			if tc.after != nil || tc.then != none {
				j.steps.install(rec)
				q.noteClosing(j)
			}
			switch tc.then {
			case lostB:
				if got := q.lostStepParts(map[string]bool{"c": true}, jobEnd.Add(time.Minute)); len(got) != 0 {
					t.Fatalf("a node not in the step, lost, changed %d steps", len(got))
				}
				got := q.lostStepParts(map[string]bool{"b": true}, jobEnd.Add(time.Minute))
				if len(got) != 1 {
					t.Fatalf("losing node b changed %d steps, want 1", len(got))
				}
				rec = got[0]
			case silent:
				if got := q.overdueSteps(jobEnd.Add(stepEndWait - time.Second)); len(got) != 0 {
					t.Fatalf("ended before the bound: %+v", got[0].rec.Step)
				}
				got := q.overdueSteps(jobEnd.Add(stepEndWait))
				if len(got) != 1 || len(got[0].silent) != 1 || got[0].silent[0] != "b" {
					t.Fatalf("at the bound: %+v, want the step with node b silent", got)
				}
				rec = got[0].rec
				if r := rec.Reports[len(rec.Reports)-1]; r.Node != "b" || !strings.Contains(r.Message, "did not report") {
					t.Fatalf("the silent node's part: %+v", r)
				}
				if !rec.Step.End.Equal(jobEnd) {
					t.Fatalf("ended at %v, want the job's end %v", rec.Step.End, jobEnd)
				}
			}
			if st := rec.Step; st.State != tc.want || st.ExitCode != tc.exit || st.Signal != tc.sig || st.End == nil {
				t.Fatalf("step = %s %d:%d end %v, want %s %d:%d", st.State, st.ExitCode, st.Signal, st.End, tc.want, tc.exit, tc.sig)
			}
			j.steps.install(rec)
			q.noteClosing(j)
			if len(q.closing) != 0 || len(j.steps.running) != 0 {
				t.Fatalf("an ended step is still waiting: closing %v, running %v", q.closing, j.steps.running)
			}
		})
	}
}
