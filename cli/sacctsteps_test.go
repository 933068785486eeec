package cli

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sacct lists a job's steps under it, -X leaves them out, and -j picks
// steps by JOB.STEP (sacct(1)).
func TestSacctStepLines(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	start, end, uid := now.Add(-time.Hour), now.Add(-time.Minute), uint32(1000)
	job := api.Job{ID: 7, State: api.StateCancelled, StartTime: &start, EndTime: &end, Nodes: []string{"dev1", "dev2"}, CPUs: 2}
	steps := append(job.PartSteps(), api.Step{JobID: 7, StepID: 0, Name: "hostname", State: api.StateCompleted,
		Nodes: []string{"dev1", "dev2"}, Tasks: 2, Start: start, End: &end})
	f.pipe.acct = []api.AcctRecord{{JobID: 7, Name: "two", Partition: "batch", User: "alice", State: api.StateCancelled,
		CancelledBy: &uid, SubmitTime: start, StartTime: &start, EndTime: end, NodeCount: 2, CPUs: 2,
		Nodes: []string{"dev1", "dev2"}, Steps: steps}}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-j", "7"}, "7|two|CANCELLED by 1000|2\n7.batch|batch|CANCELLED|1\n7.extern|extern|COMPLETED|2\n7.0|hostname|COMPLETED|2\n"},
		{[]string{"-j", "7", "-X"}, "7|two|CANCELLED by 1000|2\n"},
		{[]string{"-j", "7.batch,7.0"}, "7.batch|batch|CANCELLED|1\n7.0|hostname|COMPLETED|2\n"},
		{[]string{"-j", "7.extern"}, "7.extern|extern|COMPLETED|2\n"},
		{[]string{"-j", "7.3"}, ""},
	} {
		args := append([]string{"-P", "-n", "-o", "JobID,JobName,State,NNodes"}, tc.args...)
		r := f.slurm(t, "", "sacct", args...)
		if r.code != 0 || r.stdout != tc.want {
			t.Errorf("sacct %v: exit %d %q %q, want %q", args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	for _, bad := range []string{"7.x", "7.-1", ".0", "7_[1-2].0"} {
		if r := f.slurm(t, "", "sacct", "-j", bad); r.code != 1 || r.stderr == "" {
			t.Errorf("sacct -j %s: exit %d %q, want a refusal", bad, r.code, r.stderr)
		}
	}
}
