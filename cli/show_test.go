package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func TestJobDetails(t *testing.T) {
	var b strings.Builder
	// Times print in the location of "now": UTC keeps the text fixed.
	if err := writeJobDetails(&b, &fixtureJobs(time.Now())[3], time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	want := "JobId=1 JobName=done\n" +
		"   UserId=alice(0) GroupId=0 Groups=(null)\n" +
		"   Priority=0 Partition=batch\n" +
		"   JobState=COMPLETED Reason=None ExitCode=0:0\n" +
		"   RunTime=2-01:02:03 TimeLimit=UNLIMITED\n" +
		"   SubmitTime=2025-03-01T08:00:00 StartTime=2025-03-01T08:00:01 EndTime=2025-03-03T09:02:04\n" +
		"   PlannedStart=Unknown PlannedNodes=(null)\n" +
		"   NodeList=dev1 NumNodes=1 NumCPUs=2 Mem=1.0G Shm=default\n" +
		"   PeakMem=0 CPUTime=0:00\n" +
		"   WorkDir=/work\n" +
		"   StdOut=/work/done-1.out\n" +
		"   StdErr=/work/done-1.out\n" +
		"   Args=a,b Script=15 bytes Environment=2 variables\n" +
		"   Message=(null)\n" +
		"   History=PENDING@2025-03-01T08:00:00(Resources),RUNNING@2025-03-01T08:00:01,COMPLETED@2025-03-03T09:02:04\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A running job's show lists its running steps.
func TestJobDetailsListSteps(t *testing.T) {
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	j := fixtureJobs(now)[3]
	j.Steps = []api.Step{{JobID: 1, StepID: 0, State: api.StateRunning, Nodes: []string{"dev1", "dev2"}, Tasks: 4, Start: now.Add(-90 * time.Second)},
		{JobID: 1, StepID: 2, State: api.StateRunning, Nodes: []string{"dev2"}, Tasks: 1, Start: now}}
	var b strings.Builder
	if err := writeJobDetails(&b, &j, now); err != nil {
		t.Fatal(err)
	}
	if want := "   Steps=1.0(RUNNING,dev[1-2],4 tasks,1:30),1.2(RUNNING,dev2,1 tasks,0:00)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant a line %q", b.String(), want)
	}
}

func TestShowJob(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.run("show", "job", "1")
	var want strings.Builder
	writeJobDetails(&want, &f.jobs[3], time.Now())
	if r.code != 0 || r.stderr != "" || r.stdout != want.String() {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if req := f.MustOneRequest(t); req.Path != "/v1/jobs/1" {
		t.Errorf("asked for %s", req.Path)
	}
}

func TestShowJobPendingAndJSON(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.run("show", "job", "12")
	if r.code != 0 || !contains(r.stdout, "JobState=PENDING Reason=Priority ExitCode=N/A", "NodeList=(null) NumNodes=2",
		"StartTime=Unknown", "StdOut=corral-12.out") {
		t.Errorf("pending job:\n%s", r.stdout)
	}
	r = f.run("show", "job", "--json", "1")
	var got api.Job
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if want := f.jobs[3]; !reflect.DeepEqual(got, want) {
		t.Errorf("--json round trip:\n got %+v\nwant %+v", got, want)
	}
	// A job name cannot forge extra Key=Value lines.
	f.jobs[0].Name = "evil\nJobState=COMPLETED"
	r = f.run("show", "job", "12")
	if strings.Count(r.stdout, "\n") != 15 {
		t.Errorf("job name broke the layout:\n%s", r.stdout)
	}
}

func TestShowJobMissing(t *testing.T) {
	f := MustFakeCtld(t)
	mustFail(t, f.run("show", "job", "99"), 1, "corral show job: job 99 does not exist")
}
