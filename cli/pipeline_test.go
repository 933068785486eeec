package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func TestSubmitWait(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": "#!/bin/sh\nexit 3\n", "wait.sh": "#!/bin/sh\n#SBATCH -W\ntrue\n"})
	tests := []struct {
		args   []string
		final  api.WaitResponse
		code   int
		stderr string
	}{
		{[]string{"-W", "job.sh"}, api.WaitResponse{Done: true, State: api.StateFailed, ExitStatus: 3}, 3,
			"corral submit: job 7 ended FAILED (exit status 3)\n"},
		{[]string{"wait.sh"}, api.WaitResponse{Done: true, State: api.StateCompleted}, 0, ""},
		{[]string{"--wait", "--parsable", "job.sh"}, api.WaitResponse{Done: true, State: api.StateCancelled, ExitStatus: 1}, 1,
			"corral submit: job 7 ended CANCELLED (exit status 1)\n"},
	}
	for _, tt := range tests {
		f := MustFakeCtld(t)
		f.pipe.waits = []api.WaitResponse{{State: api.StatePending}, {State: api.StateRunning}, tt.final}
		r := f.run(append([]string{"submit"}, tt.args...)...)
		if r.code != tt.code || r.stderr != tt.stderr || !strings.Contains(r.stdout, "7") {
			t.Errorf("%v: exit %d stderr %q stdout %q; want exit %d stderr %q", tt.args, r.code, r.stderr, r.stdout, tt.code, tt.stderr)
		}
		waits := 0
		for _, req := range f.Requests() {
			if req.Path == "/v1/jobs/7/wait" && req.Query.Get("timeout_s") == "30" {
				waits++
			}
		}
		if waits != 3 {
			t.Errorf("%v: %d long polls, want 3 (until done)", tt.args, waits)
		}
	}
}

// TestSbatchWaitIsSilent: sbatch --wait exits with the job's status and,
// as Slurm's, prints no line of its own about it.
func TestSbatchWaitIsSilent(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": "#!/bin/sh\nexit 3\n"})
	f := MustFakeCtld(t)
	f.pipe.waits = []api.WaitResponse{{State: api.StateRunning}, {Done: true, State: api.StateFailed, ExitStatus: 3}}
	if r := f.slurm(t, "", "sbatch", "--wait", "job.sh"); r.code != 3 || r.stderr != "" || r.stdout != "Submitted batch job 7\n" {
		t.Errorf("sbatch --wait: exit %d stderr %q stdout %q; want 3, no stderr", r.code, r.stderr, r.stdout)
	}
}

func TestSubmitTestOnly(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": "#!/bin/sh\ntrue\n"})
	f := MustFakeCtld(t)
	now := time.Now()
	f.pipe.test = &api.TestSubmitResponse{Job: api.Job{Name: "job.sh", Partition: "batch", CPUs: 2, MemBytes: 1 << 30,
		NodeCount: 1, State: api.StatePending}, Start: &now, Nodes: []string{"n1"}}
	r := f.run("submit", "-c", "2", "--test-only", "job.sh")
	if r.code != 0 || !contains(r.stdout, "JobId=0 JobName=job.sh",
		"Job would start now on n1, using 2 CPUs and 1.0G memory per node on 1 node(s) in partition batch; nothing was submitted (--test-only)") {
		t.Errorf("exit %d stderr %q stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	req := f.MustOneRequest(t)
	var sub api.SubmitRequest
	if req.Path != "/v1/jobs/test" || json.Unmarshal(req.Body, &sub) != nil || sub.Spec.CPUs != 2 {
		t.Errorf("sent %s %s", req.Path, req.Body)
	}
	// Waiting jobs say why; refusals are one line, exit 2.
	f.pipe.test = &api.TestSubmitResponse{Job: api.Job{Partition: "batch"}, Reason: api.ReasonJobHeld}
	if r := f.run("submit", "--test-only", "job.sh"); !strings.Contains(r.stdout, "Job would wait (JobHeld); no start estimate") {
		t.Errorf("held: %s", r.stdout)
	}
	f.submitStatus, f.submitError = 400, "partition gpu does not exist (partitions: batch)"
	mustFail(t, f.run("submit", "-p", "gpu", "--test-only", "job.sh"), 2, "corral submit: partition gpu does not exist (partitions: batch)")
	mustFail(t, f.run("submit", "--test-only", "-W", "job.sh"), 2, "corral submit: --test-only submits nothing, so there is nothing to --wait for")
}

// sbatch --test-only answers in Slurm's words, on standard error.
func TestSbatchTestOnly(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": "#!/bin/sh\ntrue\n"})
	f := MustFakeCtld(t)
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	f.pipe.test = &api.TestSubmitResponse{Job: api.Job{Partition: "batch", CPUs: 2, NodeCount: 2}, Start: &start,
		Nodes: []string{"n1", "n2"}, JobID: 17}
	r := f.slurm(t, "", "sbatch", "-N2", "-c", "2", "--test-only", "job.sh")
	if want := "sbatch: Job 17 to start at 2026-03-04T05:06:07 using 4 processors on nodes n[1-2] in partition batch\n"; r.code != 0 ||
		r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	f.pipe.test = &api.TestSubmitResponse{Job: api.Job{Partition: "batch", CPUs: 1}, Reason: api.ReasonJobHeld, JobID: 18}
	r = f.slurm(t, "", "sbatch", "-H", "--test-only", "job.sh")
	if want := "sbatch: Job 18 to start at Unknown using 1 processors on nodes (null) in partition batch\n"; r.code != 0 || r.stderr != want {
		t.Errorf("held: exit %d stderr %q, want %q", r.code, r.stderr, want)
	}
}

func TestControlCommands(t *testing.T) {
	f := MustFakeCtld(t)
	if r := f.run("hold", "12", "13_4"); r.code != 0 || r.stderr != "" {
		t.Errorf("hold: %+v", r)
	}
	var req api.JobsRequest
	if !f.lastBody("/v1/jobs/hold", &req) || fmt.Sprint(req.IDs) != "[12]" || fmt.Sprint(req.Tasks) != "[13_4]" {
		t.Errorf("hold sent %+v", req)
	}
	f.pipe.control = api.JobsResponse{Done: []string{}, Errors: map[string]string{"13_4": "job 13_4 is not pending (RUNNING)", "9": "job 9 does not exist"}}
	r := f.run("requeue", "13_4", "9")
	if r.code != 1 || r.stderr != "corral requeue: job 9 does not exist\ncorral requeue: job 13_4 is not pending (RUNNING)\n" {
		t.Errorf("requeue with errors: %+v", r)
	}
	mustFail(t, f.run("release"), 2, "corral release: give the job IDs to release")
	mustFail(t, f.run("release", "12_x"), 2, `corral release: invalid array task in "12_x": use 123_4 for task 4 of array job 123`)

	f.pipe.control = api.JobsResponse{Done: []string{"12"}}
	if r := f.run("update", "JobId=12", "TimeLimit=1:30:00", "nice=10", "Name=renamed"); r.code != 0 {
		t.Errorf("update: %+v", r)
	}
	var up api.UpdateRequest
	if !f.lastBody("/v1/jobs/update", &up) || up.ID != 12 || up.TimeLimit == nil || *up.TimeLimit != 5400 ||
		up.Nice == nil || *up.Nice != 10 || up.Name == nil || *up.Name != "renamed" || up.Task != nil {
		t.Errorf("update sent %+v", up)
	}
	// scontrol's other keys, JobId among them anywhere.
	if r := f.run("update", "Partition=gpu", "Dependency=afterok:3", "JobId=12", "StartTime=now+1hour", "ExcNodeList=dev[1-2]",
		"ReqNodeList=", "MinMemoryCPU=1G", "Requeue=1", "Comment=x y", "Features=a100", "QOS=normal", "Account=ml",
		"ArrayTaskThrottle=3"); r.code != 0 {
		t.Errorf("update: %+v", r)
	}
	up = api.UpdateRequest{}
	if !f.lastBody("/v1/jobs/update", &up) || up.ID != 12 || *up.Partition != "gpu" || *up.Dependency != "afterok:3" ||
		up.Begin == nil || time.Until(*up.Begin) < 59*time.Minute || !slices.Equal(*up.Exclude, []string{"dev1", "dev2"}) ||
		len(*up.NodeList) != 0 || *up.MemPerCPU != 1<<30 || !*up.Requeue || *up.Comment != "x y" || *up.Constraint != "a100" ||
		*up.QOS != "normal" || *up.Account != "ml" || *up.ArrayTaskThrottle != 3 {
		t.Errorf("update sent %+v", up)
	}
	// A list of jobs, as scontrol takes it: one request each, every ID
	// checked first.
	before := len(f.Requests())
	if r := f.slurm(t, "", "scontrol", "update", "JobId=12,13_2", "TimeLimit=10"); r.code != 0 {
		t.Errorf("update of two jobs: %+v", r)
	}
	var ids []string
	for _, req := range f.Requests()[before:] {
		var u api.UpdateRequest
		if req.Path != "/v1/jobs/update" || json.Unmarshal(req.Body, &u) != nil || u.TimeLimit == nil || *u.TimeLimit != 600 {
			t.Errorf("update of two jobs sent %s %s", req.Path, req.Body)
			continue
		}
		ref := fmt.Sprint(u.ID)
		if u.Task != nil {
			ref += fmt.Sprintf("_%d", *u.Task)
		}
		ids = append(ids, ref)
	}
	if !slices.Equal(ids, []string{"12", "13_2"}) {
		t.Errorf("update of two jobs updated %v, want 12 and 13_2", ids)
	}
	before = len(f.Requests())
	if r := f.slurm(t, "", "scontrol", "update", "JobId=12,x", "TimeLimit=10"); r.code == 0 || len(f.Requests()) != before {
		t.Errorf("update of a bad list: exit %d, %d requests sent", r.code, len(f.Requests())-before)
	}
	for args, want := range map[string]string{
		"12":                      "corral update: give a job ID and at least one KEY=VALUE (" + jobUpdateKeys + ")",
		"12 Colour=red":           "corral update: unknown key Colour (keys: " + jobUpdateKeys + ")",
		"12 TimeLimit=soon":       "corral update: invalid TimeLimit=soon: use M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED",
		"12 Nice":                 `corral update: "Nice" is not KEY=VALUE (keys: ` + jobUpdateKeys + ")",
		"12 Requeue=maybe":        "corral update: invalid Requeue=maybe: give 0 or 1",
		"12 ArrayTaskThrottle=-1": "corral update: invalid ArrayTaskThrottle=-1: give a number from 0 (no limit)",
	} {
		mustFail(t, f.run(append([]string{"update"}, strings.Fields(args)...)...), 2, want)
	}
}

func TestAcctTable(t *testing.T) {
	f := MustFakeCtld(t)
	start := time.Date(2026, 1, 20, 10, 0, 0, 0, time.UTC)
	two := 2
	stepEnd := start.Add(30 * time.Second)
	f.pipe.acct = []api.AcctRecord{
		{JobID: 5, Name: "train", Partition: "batch", User: "alice", State: api.StateCompleted, StartTime: &start,
			EndTime: start.Add(90 * time.Second), ElapsedS: 90, CPUs: 4, NodeCount: 1, CPUTimeS: 360, TotalCPUUsec: 61e6,
			MaxRSSBytes: 3 << 29, Nodes: []string{"n1"}, Steps: []api.Step{{JobID: 5, StepID: 0, Name: "hostname",
				State: api.StateFailed, ExitCode: 2, Nodes: []string{"n1", "n2"}, Tasks: 4, CPUsPerTask: 1, Start: start,
				End: &stepEnd, CPUTimeUsec: 2e6, PeakMemBytes: 1 << 20}}},
		{JobID: 9, ArrayJobID: 7, ArrayTaskID: &two, Name: "arr", Partition: "batch", User: "alice", State: api.StateFailed,
			ExitCode: 3, StartTime: &start, EndTime: start, Nodes: []string{"n2"}},
		{JobID: 10, ArrayJobID: 7, ArrayTasks: "3-5", Name: "arr", Partition: "batch", User: "alice", State: api.StateCancelled,
			EndTime: start, Nodes: []string{}},
	}
	r := f.run("acct", "-s", "CD,FAILED,CA", "-u", "alice", "-j", "5,7_2")
	want := "JOBID    JOBNAME   PARTITION  USER   STATE      EXITCODE  ELAPSED  CPUTIME  TOTALCPU  MAXRSS  NODELIST\n" +
		"5        train     batch      alice  COMPLETED  0:0       1:30     6:00     1:01      1.5G    n1\n" +
		"5.0      hostname  batch      alice  FAILED     2:0       0:30     2:00     0:02      1.0M    n[1-2]\n" +
		"7_2      arr       batch      alice  FAILED     3:0       0:00     0:00     0:00      0       n2\n" +
		"7_[3-5]  arr       batch      alice  CANCELLED  0:0       0:00     0:00     0:00      0       None assigned\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d stderr %q\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want)
	}
	q := f.MustOneRequest(t).Query
	if fmt.Sprint(q["state"]) != "[COMPLETED FAILED CANCELLED]" || fmt.Sprint(q["id"]) != "[5 7_2]" || q.Get("user") != "alice" {
		t.Errorf("query %v", q)
	}
	if r := f.run("acct", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"array_tasks": "3-5"`) {
		t.Errorf("--json: %+v", r)
	}
	mustFail(t, f.run("acct", "-s", "DONE"), 2, "corral acct: unknown job state \"DONE\" (valid: PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL or their short codes)")
	mustFail(t, f.run("acct", "-S", "yesterdayish"), 2, `corral acct: invalid --starttime "yesterdayish": unexpected "yesterdayish": `+
		"use HH:MM[:SS] [AM|PM], YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], now[+N[seconds|minutes|hours|days|weeks]], today, tomorrow, midnight, noon, elevenses, fika or teatime")
}

func TestAcctTimes(t *testing.T) {
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"10:00":            "2026-06-15T10:00:00Z", // earlier today
		"14:00":            "2026-06-14T14:00:00Z", // not yet today: yesterday's
		"2026-06-01":       "2026-06-01T00:00:00Z",
		"2026-07-01T08:00": "2026-07-01T08:00:00Z", // an explicit future date stays
		"0601":             "2026-06-01T00:00:00Z",
		"12/24":            "2025-12-24T00:00:00Z", // this year's is ahead: last year's
		"now-2hours":       "2026-06-15T10:00:00Z",
		"today":            "2026-06-15T00:00:00Z",
	} {
		got, err := parseAcctTime(in, now)
		if err != nil || got.UTC().Format(time.RFC3339) != want {
			t.Errorf("%s: %v, %v; want %s", in, got, err, want)
		}
	}
}

func TestQueueArrays(t *testing.T) {
	f := MustFakeCtld(t)
	zero := 0
	spec := api.JobSpec{Array: &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 6, Step: 2}}}}
	f.jobs = []api.Job{
		{ID: 20, ArrayJobID: 20, ArrayTaskID: &zero, Name: "arr", User: "bob", Partition: "batch", State: api.StateRunning, Nodes: []string{"n1"}, Spec: spec},
		{ID: 22, ArrayJobID: 20, ArrayTasks: "4-6:2%1", Name: "arr", User: "bob", Partition: "batch", State: api.StatePending,
			Reason: api.ReasonJobArrayTaskLimit, Spec: spec},
	}
	r := f.run("queue")
	if r.code != 0 || !contains(r.stdout, "\n20_0 ", "\n20_[4-6:2%1]  ", "(JobArrayTaskLimit)") {
		t.Errorf("folded:\n%s", r.stdout)
	}
	r = f.run("queue", "-r", "--json")
	var jobs []api.Job
	if err := json.Unmarshal([]byte(r.stdout), &jobs); err != nil || len(jobs) != 3 {
		t.Fatalf("-r --json: %v\n%s", err, r.stdout)
	}
	for i, want := range []string{"20_0", "20_4", "20_6"} {
		if got := api.JobRefText(&jobs[i]); got != want || jobs[i].ID != []uint64{20, 22, 23}[i] {
			t.Errorf("task %d: %s id %d, want %s", i, got, jobs[i].ID, want)
		}
	}
	if r := f.run("queue", "-j", "20_4"); r.code != 0 || f.Requests()[len(f.Requests())-1].Query.Get("id") != "20_4" {
		t.Errorf("-j 20_4: %+v", r)
	}
	f.run("show", "job", "20_4")
	f.run("cancel", "20_4", "21")
	reqs := f.Requests()
	var cancel api.CancelRequest
	if reqs[len(reqs)-2].Path != "/v1/jobs/20_4" || !f.lastBody("/v1/jobs/cancel", &cancel) ||
		fmt.Sprint(cancel.IDs, cancel.Tasks) != "[21] [20_4]" {
		t.Errorf("show sent %s; cancel sent %+v", reqs[len(reqs)-2].Path, cancel)
	}
}
