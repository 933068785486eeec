package cli

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sstat picks the steps sstat(1) says: without a step the lowest-numbered
// running srun step, with -a every running one, JOB.N that one; and
// answers Slurm's messages when none is running.
func TestSstatSteps(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	end := now
	f.steps = map[uint64][]api.Step{
		7: {{JobID: 7, StepID: 0, State: api.StateCompleted, End: &end}, {JobID: 7, StepID: 1, State: api.StateRunning},
			{JobID: 7, StepID: 2, State: api.StateRunning}},
		8: {},
	}
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"-j", "7"}, 0, "7.1|2M|1\n", ""},
		{[]string{"-a", "-j", "7"}, 0, "7.1|2M|1\n7.2|3M|1\n", ""},
		{[]string{"7.2"}, 0, "7.2|3M|1\n", ""},
		{[]string{"-j", "7.0"}, 1, "", "sstat: error: StepId=7.0 not found running.\n"},
		{[]string{"-j", "8"}, 1, "", "sstat: error: No steps running for job 8\n"},
		{[]string{"-j", "9"}, 1, "", "sstat: error: couldn't get steps for job 9\n"},
		{[]string{"-j", "8,7"}, 1, "7.1|2M|1\n", "sstat: error: No steps running for job 8\n"},
	} {
		args := append([]string{"-n", "-P", "-o", "JobID,MaxRSS,NTasks"}, tc.args...)
		r := f.slurm(t, "", "sstat", args...)
		if r.code != tc.code || r.stdout != tc.stdout || r.stderr != tc.errs {
			t.Errorf("sstat %v: exit %d %q %q, want %d %q %q", args, r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.errs)
		}
	}
	for _, bad := range [][]string{{}, {"-j", "7.x"}, {"-j", "7", "-o", "Elapsed"}, {"-i", "-j", "7"}} {
		if r := f.slurm(t, "", "sstat", bad...); r.code != 1 || r.stderr == "" {
			t.Errorf("sstat %v: exit %d %q, want a refusal", bad, r.code, r.stderr)
		}
	}
}
