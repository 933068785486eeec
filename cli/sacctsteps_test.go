package cli

import (
	"strings"
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

// sacct --units prints memory in one unit, as Slurm's: two decimals when
// not whole; without it each size takes the largest unit it fills.
func TestSacctUnits(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	start, end := now.Add(-time.Hour), now.Add(-time.Minute)
	f.pipe.acct = []api.AcctRecord{{JobID: 7, Name: "mem", Partition: "batch", User: "alice", State: api.StateCompleted,
		SubmitTime: start, StartTime: &start, EndTime: end, NodeCount: 1, CPUs: 1, Nodes: []string{"dev1"},
		Steps: []api.Step{{JobID: 7, StepID: 0, Name: "x", State: api.StateCompleted, Nodes: []string{"dev1"}, Tasks: 1,
			Start: start, End: &end, PeakMemBytes: 1536 << 20}}}}
	for _, tc := range []struct {
		units, want string
	}{{"", "1.50G"}, {"M", "1536M"}, {"g", "1.50G"}, {"K", "1572864K"}, {"T", "0.00T"}} {
		args := []string{"-P", "-n", "-j", "7.0", "-o", "MaxRSS"}
		if tc.units != "" {
			args = append(args, "--units="+tc.units)
		}
		if r := f.slurm(t, "", "sacct", args...); r.code != 0 || r.stdout != tc.want+"\n" {
			t.Errorf("sacct --units=%s: exit %d %q %q, want %q", tc.units, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// No heterogeneous jobs: --whole-hetjob changes nothing.
	plain := f.slurm(t, "", "sacct", "-P", "-n", "-j", "7")
	for _, opt := range []string{"--whole-hetjob", "--whole-hetjob=no"} {
		if r := f.slurm(t, "", "sacct", "-P", "-n", "-j", "7", opt); r.code != 0 || r.stdout != plain.stdout || plain.stdout == "" {
			t.Errorf("sacct %s: exit %d %q %q, want %q", opt, r.code, r.stdout, r.stderr, plain.stdout)
		}
	}
	if r := f.slurm(t, "", "sacct", "--units=X"); r.code != 1 || r.stderr == "" {
		t.Errorf("sacct --units=X: exit %d %q", r.code, r.stderr)
	}
}

// sacct's filters on what the runs were: node and CPU counts (N or
// MIN-MAX), time limits, QOS (none given is normal), uid and gid,
// reason and constraints.
func TestSacctFilters(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	start, end := now.Add(-time.Hour), now.Add(-time.Minute)
	rec := func(id uint64, nodes, cpus int, uid uint32) api.AcctRecord {
		return api.AcctRecord{JobID: id, Name: "j", Partition: "batch", User: "u", UID: uid, State: api.StateCompleted,
			SubmitTime: start, StartTime: &start, EndTime: end, NodeCount: nodes, CPUs: cpus}
	}
	f.pipe.acct = []api.AcctRecord{rec(1, 1, 2, 1000), rec(2, 2, 4, 1000), rec(3, 4, 1, 1001)}
	job := func(id uint64, limit int64, qos, constraint string, gid uint32) api.Job {
		return api.Job{ID: id, State: api.StateCompleted, TimeLimit: limit, GID: gid,
			Spec: api.JobSpec{QOS: qos, Constraint: constraint}, SubmitTime: start, StartTime: &start, EndTime: &end}
	}
	f.jobs = []api.Job{job(1, 600, "", "a100", 100), job(2, 7200, "normal", "", 200), job(3, 0, "", "a100&ib", 100)}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nnodes=2"}, "2\n"},
		{[]string{"-i", "1-2"}, "1\n2\n"},
		{[]string{"--ncpus=4-8"}, "2\n3\n"},
		{[]string{"--uid=1001"}, "3\n"},
		{[]string{"--timelimit-min=1:00:00"}, "2\n3\n"},
		{[]string{"-K", "30"}, "1\n"},
		{[]string{"-q", "normal"}, "1\n2\n3\n"},
		{[]string{"--qos=high"}, ""},
		{[]string{"--constraints=a100"}, "1\n3\n"},
		{[]string{"-g", "200"}, "2\n"},
	} {
		args := append([]string{"-X", "-P", "-n", "-o", "JobID", "-a", "-j", "1,2,3"}, c.args...)
		if r := f.slurm(t, "", "sacct", args...); r.code != 0 || r.stdout != c.want {
			t.Errorf("sacct %v: exit %d %q %q, want %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	for _, bad := range [][]string{{"--nnodes=3-1"}, {"--ncpus=x"}, {"--timelimit-min=soon"}, {"--uid=nosuchuser"}} {
		if r := f.slurm(t, "", "sacct", bad...); r.code != 1 || r.stderr == "" {
			t.Errorf("sacct %v: exit %d %q, want a refusal", bad, r.code, r.stderr)
		}
	}
}

// sacct -B and --env-vars print each named job's script or submission
// environment under Slurm's banner, NONE for a job without a script.
func TestSacctBatchScriptAndEnv(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = []api.Job{
		{ID: 8, State: api.StateRunning, Spec: api.JobSpec{Script: "#!/bin/sh\nsrun hostname\n", Env: []string{"A=1", "B=two"}}},
		{ID: 5, State: api.StateCompleted, Spec: api.JobSpec{Script: "#!/bin/bash\necho hi\n"}},
		{ID: 9, State: api.StateRunning, Spec: api.JobSpec{Env: []string{"C=3"}}}, // an allocation: no script
	}
	rule := strings.Repeat("-", 80) + "\n"
	r := f.slurm(t, "", "sacct", "-B", "-j", "8,5,9")
	want := "Batch Script for 5\n" + rule + "#!/bin/bash\necho hi\n\n" +
		"Batch Script for 8\n" + rule + "#!/bin/sh\nsrun hostname\n\n" +
		"Batch Script for 9\n" + rule + "NONE\n\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("sacct -B: exit %d %q\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want)
	}
	r = f.slurm(t, "", "sacct", "--env-vars", "-j", "8,9")
	want = "Environment used for 8 (must be batch to display)\n" + rule + "A=1\nB=two\n\n" +
		"Environment used for 9 (must be batch to display)\n" + rule + "NONE\n\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("sacct --env-vars: exit %d %q\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want)
	}
	for args, want := range map[string]string{
		"-B":                 "sacct: error: When requesting job scripts you must also request specific jobs with the '-j' option.\n",
		"--env-vars":         "sacct: error: When requesting job environment you must also request specific jobs with the '-j' option.\n",
		"-B --env-vars -j 8": "sacct: error: Options --batch-script and --env-vars are mutually exclusive\n",
	} {
		if r := f.slurm(t, "", "sacct", strings.Fields(args)...); r.code != 1 || r.stderr != want {
			t.Errorf("sacct %s: exit %d %q, want %q", args, r.code, r.stderr, want)
		}
	}
}
