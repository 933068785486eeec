package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// lastSignal is the last POST /v1/jobs/signal the fake controller got.
func lastSignal(t *testing.T, f *fakeCtld) api.SignalJobsRequest {
	t.Helper()
	reqs := f.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == "/v1/jobs/signal" {
			var req api.SignalJobsRequest
			if err := json.Unmarshal(reqs[i].Body, &req); err != nil {
				t.Fatal(err)
			}
			return req
		}
	}
	t.Fatalf("no signal request among %+v", reqs)
	return api.SignalJobsRequest{}
}

// scancel's -s, -b and -f pick the signal and the processes as Slurm
// does: names in any case with or without SIG, or numbers; the steps by
// default, -b the batch shell, -f (which wins over -b) the script and all
// it started; JOB.STEP that step alone; -s KILL without -b/-f cancels.
func TestScancelSignal(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	step := func(n int) *int { return &n }
	for _, tc := range []struct {
		args []string
		want api.SignalJobsRequest
	}{
		{[]string{"-s", "USR1", "12"}, api.SignalJobsRequest{Signal: 10, Scope: api.SignalSteps}},
		{[]string{"--signal=sigusr2", "-b", "12"}, api.SignalJobsRequest{Signal: 12, Scope: api.SignalBatch}},
		{[]string{"-bf", "--signal", "10", "12"}, api.SignalJobsRequest{Signal: 10, Scope: api.SignalFull}},
		{[]string{"-b", "12"}, api.SignalJobsRequest{Signal: 9, Scope: api.SignalBatch}},
		{[]string{"-s", "SIGINT", "12.2"}, api.SignalJobsRequest{Signal: 2, Step: step(2)}},
	} {
		r := f.slurm(t, "", "scancel", tc.args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("scancel %q: exit %d %q", tc.args, r.code, r.stderr)
		}
		got := lastSignal(t, f)
		if len(got.IDs) != 1 || got.IDs[0] != 12 || got.Signal != tc.want.Signal || got.Scope != tc.want.Scope ||
			(got.Step == nil) != (tc.want.Step == nil) || got.Step != nil && *got.Step != *tc.want.Step {
			t.Errorf("scancel %q sent %+v, want %+v", tc.args, got, tc.want)
		}
	}
	before := len(f.Requests())
	if r := f.slurm(t, "", "scancel", "-s", "KILL", "12"); r.code != 0 || f.Requests()[before].Path != "/v1/jobs/cancel" {
		t.Errorf("scancel -s KILL: exit %d %q, sent %+v; want a cancel", r.code, r.stderr, f.Requests()[before:])
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-s", "USR1", "99"}, "scancel: error: Kill job error on job id 99: job 99 does not exist\n"},
		{[]string{"-s", "USR1", "12.9"}, "scancel: error: Kill job error on job step id 12.9: step 12.9 is not running\n"},
		{[]string{"-Q", "-s", "USR1", "99"}, ""},
	} {
		if r := f.slurm(t, "", "scancel", tc.args...); r.code != 1 || r.stderr != tc.stderr {
			t.Errorf("scancel %q: exit %d %q, want 1 %q", tc.args, r.code, r.stderr, tc.stderr)
		}
	}
	// -p is applied here; the job that passes (gpu's 3) is signalled by ID.
	if r := f.slurm(t, "", "scancel", "-s", "USR1", "-p", "gpu"); r.code != 0 {
		t.Fatalf("scancel -s USR1 -p gpu: exit %d %q", r.code, r.stderr)
	}
	if got := lastSignal(t, f); len(got.IDs) != 1 || got.IDs[0] != 3 || got.Signal != 10 {
		t.Errorf("scancel -s USR1 -p gpu sent %+v", got)
	}
}

// corral cancel --signal takes the same choices, by job ID, and refuses
// filters and unknown signals before sending anything.
func TestCancelSignal(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	if r := f.run("cancel", "--signal", "USR1", "--full", "12"); r.code != 0 || r.stderr != "" {
		t.Fatalf("corral cancel --signal: %+v", r)
	}
	if got := lastSignal(t, f); len(got.IDs) != 1 || got.IDs[0] != 12 || got.Signal != 10 || got.Scope != api.SignalFull {
		t.Errorf("sent %+v", got)
	}
	before := len(f.Requests())
	mustFail(t, f.run("cancel", "-s", "USR1", "-u", "bob"), 2, "corral cancel: --signal, --batch and --full take job IDs and JOB.STEP, not filters")
	mustFail(t, f.run("cancel", "-s", "BOGUS", "12"), 2, "corral cancel: Unknown job signal: BOGUS: give a name such as USR1 or SIGUSR1, or a number from 1 to 64")
	if n := len(f.Requests()) - before; n != 0 {
		t.Errorf("refused command lines reached the controller %d times", n)
	}
	mustFail(t, f.run("cancel", "-s", "USR1", "99"), 1, "corral cancel: 99: job 99 does not exist")
}
