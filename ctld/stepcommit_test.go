package ctld

import (
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
		{"a signalled task", two(nil), []store.StepNodeEnd{a, {Node: "b", ExitCode: 137, Signal: 9}}, api.StateFailed, 137, 9},
		{"tasks that could not start", two(nil), []store.StepNodeEnd{a, {Node: "b", State: api.StateFailed, Message: "no container"}}, api.StateFailed, 0, 0},
		{"cancelled", two(func(r *store.StepRecord) { r.CancelRequested = true }), []store.StepNodeEnd{a, {Node: "b", ExitCode: 143}}, api.StateCancelled, 143, 0},
		{"a lost node", two(nil), []store.StepNodeEnd{a, {Node: "b", Lost: true}}, api.StateNodeFail, 0, 0},
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

// A step still running when its job ends takes the job's end, unless a
// node already reported one of its tasks failed and nobody cancelled it:
// then the step failed before its job ended (an MPI_Abort that ended srun
// and the batch script before the other node's report arrived).
func TestStepEndState(t *testing.T) {
	rec := func(cancelled bool, reports ...store.StepNodeEnd) *store.StepRecord {
		return &store.StepRecord{Step: api.Step{JobID: 7, StepID: 0, State: api.StateRunning},
			Layout: []api.StepNode{{Node: "a"}, {Node: "b"}}, Reports: reports, CancelRequested: cancelled}
	}
	for _, tc := range []struct {
		name   string
		rec    *store.StepRecord
		jobEnd api.JobState
		want   api.JobState
	}{
		{"no report yet", rec(false), api.StateCancelled, api.StateCancelled},
		{"a node's tasks exited 0", rec(false, store.StepNodeEnd{Node: "a"}), api.StateCancelled, api.StateCancelled},
		{"a task aborted with 7", rec(false, store.StepNodeEnd{Node: "b", ExitCode: 7}), api.StateCancelled, api.StateFailed},
		{"a task killed by a signal", rec(false, store.StepNodeEnd{Node: "b", ExitCode: 137, Signal: 9}), api.StateCancelled, api.StateFailed},
		{"tasks that could not start", rec(false, store.StepNodeEnd{Node: "b", State: api.StateFailed}), api.StateCancelled, api.StateFailed},
		{"cancelled by its user", rec(true, store.StepNodeEnd{Node: "b", ExitCode: 143}), api.StateCancelled, api.StateCancelled},
		{"its job's node failed", rec(false, store.StepNodeEnd{Node: "b", ExitCode: 7}), api.StateNodeFail, api.StateNodeFail},
	} {
		if got := stepEndState(tc.rec, tc.jobEnd); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if ended := endedStep(tc.rec, stepEndState(tc.rec, tc.jobEnd), time.Now()); tc.want == api.StateFailed && ended.Step.ExitCode == 0 && ended.Step.Signal == 0 &&
			tc.rec.Reports[0].State != api.StateFailed {
			t.Errorf("%s: ended FAILED without the reported exit code: %+v", tc.name, ended.Step)
		}
	}
}
