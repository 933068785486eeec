package cli

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func decodeCancel(t *testing.T, r recorded) api.CancelRequest {
	t.Helper()
	if r.Method != "POST" || r.Path != "/v1/jobs/cancel" {
		t.Fatalf("request %s %s, want POST /v1/jobs/cancel", r.Method, r.Path)
	}
	var req api.CancelRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestCancel(t *testing.T) {
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		want   api.CancelRequest
		code   int
		stderr string
	}{
		{[]string{"3"}, api.CancelRequest{IDs: []uint64{3}}, 0, ""},
		{[]string{"3", "12"}, api.CancelRequest{IDs: []uint64{3, 12}}, 0, ""},
		// corral's own cancel names a job that had ended (scancel does not).
		{[]string{"3", "1", "12"}, api.CancelRequest{IDs: []uint64{3, 1, 12}}, 1, "corral cancel: job 1 already finished (COMPLETED)\n"},
		{[]string{"99", "3", "42"}, api.CancelRequest{IDs: []uint64{99, 3, 42}}, 1,
			"corral cancel: job 42 does not exist\ncorral cancel: job 99 does not exist\n"},
		{[]string{"-u", "bob", "-t", "PD,R", "-n", "eval"},
			api.CancelRequest{User: "bob", States: []api.JobState{api.StatePending, api.StateRunning}, Name: "eval"}, 0, ""},
		{[]string{"12", "-u", "bob", "--state=pending"}, // options after IDs, as scancel allows
			api.CancelRequest{IDs: []uint64{12}, User: "bob", States: []api.JobState{api.StatePending}}, 0, ""},
		{[]string{"--me"}, api.CancelRequest{User: me}, 0, ""},
	} {
		f := MustFakeCtld(t)
		f.jobs = fixtureJobs(time.Now())
		r := f.run(append([]string{"cancel"}, tc.args...)...)
		if r.code != tc.code || r.stderr != tc.stderr || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.stderr)
		}
		if got := decodeCancel(t, f.MustOneRequest(t)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q sent %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestCancelBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "corral cancel: give job IDs, JOB.STEP or a filter (--user, --me, --states, --name)"},
		{[]string{"12.x"}, "corral cancel: invalid job step 12.x: give JOB.STEP with a step number, as 12.0"},
		{[]string{"12.batch"}, "corral cancel: invalid job step 12.batch: give JOB.STEP with a step number, as 12.0"},
		{[]string{"abc"}, `corral cancel: invalid job id "abc": use a positive number`},
		{[]string{"5", "6x"}, `corral cancel: invalid job id "6x": use a positive number`},
		{[]string{"-t", "nope"}, `corral cancel: unknown job state "nope" (valid: PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL or their short codes)`},
		{[]string{"--me", "-u", "bob"}, "corral cancel: give --me or --user, not both"},
		{[]string{"-u", "", "5"}, "corral cancel: --user and --name must not be empty"},
		{[]string{"5", "--frob"}, "corral cancel: unrecognized option --frob"},
	} {
		f := MustFakeCtld(t)
		mustFail(t, f.run(append([]string{"cancel"}, tc.args...)...), 2, tc.want)
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%q reached the controller", tc.args)
		}
	}
}

// JOB.STEP cancels that step alone (POST /v1/steps/cancel), beside any
// jobs named; a step the controller refuses is reported and fails the
// command. scancel takes the same.
func TestCancelSteps(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	if r := f.run("cancel", "12.0", "3"); r.code != 0 || r.stderr != "" {
		t.Fatalf("cancel 12.0 3: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := f.run("cancel", "12.9"); r.code != 1 || r.stderr != "corral cancel: step 12.9: step 12.9 is not running\n" {
		t.Fatalf("cancel 12.9: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := f.slurm(t, "", "scancel", "12.1,12.2"); r.code != 0 || r.stderr != "" {
		t.Fatalf("scancel 12.1,12.2: exit %d, stderr %q", r.code, r.stderr)
	}
	var steps []api.StepCancelRequest
	var jobs []api.CancelRequest
	for _, r := range f.Requests() {
		switch r.Path {
		case "/v1/steps/cancel":
			var req api.StepCancelRequest
			if err := json.Unmarshal(r.Body, &req); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, req)
		case "/v1/jobs/cancel":
			jobs = append(jobs, decodeCancel(t, r))
		}
	}
	want := []api.StepCancelRequest{{JobID: 12, StepID: 0}, {JobID: 12, StepID: 9}, {JobID: 12, StepID: 1}, {JobID: 12, StepID: 2}}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("step cancels %+v, want %+v", steps, want)
	}
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0].IDs, []uint64{3}) {
		t.Fatalf("job cancels %+v, want one of job 3", jobs)
	}
}

// TestCancelBatchesManyIDs: the controller takes at most
// api.MaxRefsPerRequest IDs a request, so the CLI sends more in batches:
// whatever a user could cancel at once before still goes through.
func TestCancelBatchesManyIDs(t *testing.T) {
	f := MustFakeCtld(t)
	args := []string{"cancel"}
	for id := 1; id <= 2*api.MaxRefsPerRequest+5; id++ {
		args = append(args, strconv.Itoa(id))
	}
	r := f.run(args...)
	if r.code != 1 || strings.Count(r.stderr, "\n") != 2*api.MaxRefsPerRequest+5 {
		t.Errorf("exit %d, %d error lines; want 1 and one per missing job", r.code, strings.Count(r.stderr, "\n"))
	}
	var sizes []int
	for _, rec := range f.Requests() {
		sizes = append(sizes, len(decodeCancel(t, rec).IDs))
	}
	if want := []int{api.MaxRefsPerRequest, api.MaxRefsPerRequest, 5}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("requests of %v IDs, want %v", sizes, want)
	}
}
