package cli

import (
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// fixtureJobs are one job in each interesting shape; times are fixed where
// the output must be exact.
func fixtureJobs(now time.Time) []api.Job {
	at := func(s string) *time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return &t
	}
	running := now.Add(-(time.Hour + time.Minute + 5*time.Second))
	zero := 0
	return []api.Job{
		{ID: 12, Name: "eval", User: "bob", Partition: "batch", State: api.StatePending, Reason: api.ReasonPriority,
			CPUs: 1, NodeCount: 2, SubmitTime: *at("2025-03-01T10:00:00Z")},
		{ID: 3, Name: "train big", User: "alice", Partition: "gpu", State: api.StateRunning, Reason: api.ReasonNone,
			CPUs: 4, MemBytes: 8 << 30, NodeCount: 2, Nodes: []string{"dev1", "dev2"}, SubmitTime: *at("2025-03-01T09:00:00Z"),
			StartTime: &running},
		{ID: 11, Name: "x\ny", User: "bob", Partition: "batch", State: api.StatePending, CPUs: 1, SubmitTime: *at("2025-03-01T10:00:00Z")},
		{ID: 1, Name: "done", User: "alice", Partition: "batch", State: api.StateCompleted, Reason: api.ReasonNone,
			CPUs: 2, MemBytes: 1 << 30, NodeCount: 1, Nodes: []string{"dev1"}, ExitCode: &zero,
			SubmitTime: *at("2025-03-01T08:00:00Z"), StartTime: at("2025-03-01T08:00:01Z"), EndTime: at("2025-03-03T09:02:04Z"),
			Spec: api.JobSpec{Name: "done", Script: "#!/bin/sh\ntrue\n", CPUs: 2, WorkDir: "/work", Output: "%x-%j.out",
				Args: []string{"a", "b"}, Env: []string{"A=1", "B=2"}},
			History: []api.Transition{{State: api.StatePending, Reason: api.ReasonResources, Time: *at("2025-03-01T08:00:00Z")},
				{State: api.StateRunning, Time: *at("2025-03-01T08:00:01Z")}, {State: api.StateCompleted, Time: *at("2025-03-03T09:02:04Z")}}},
	}
}

func TestQueueTable(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.run("queue")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := []string{
		`JOBID  PARTITION  NAME       USER   ST  TIME        NODES  NODELIST\(REASON\)`,
		`1      batch      done       alice  CD  2-01:02:03  1      dev1`,
		`3      gpu        train big  alice  R   1:01:0\d     2      dev1,dev2`,
		`11     batch      x\?y        bob    PD  0:00        1      \(None\)`,
		`12     batch      eval       bob    PD  0:00        2      \(Priority\)`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i := range want {
		if !regexp.MustCompile("^" + want[i] + "$").MatchString(lines[i]) {
			t.Errorf("line %d = %q, want /%s/", i, lines[i], want[i])
		}
	}
	req := f.MustOneRequest(t)
	if req.Path != "/v1/jobs" || req.Query.Encode() != "view=brief" {
		t.Errorf("request %s?%s, want /v1/jobs?view=brief: no filter, the table's brief view", req.Path, req.Query.Encode())
	}
}

func TestQueueEmpty(t *testing.T) {
	f := MustFakeCtld(t)
	if r := f.run("queue"); r.code != 0 || r.stdout != "JOBID  PARTITION  NAME  USER  ST  TIME  NODES  NODELIST(REASON)\n" {
		t.Errorf("%+v", r)
	}
	if r := f.run("queue", "--json"); r.code != 0 || r.stdout != "[]\n" {
		t.Errorf("--json with no jobs: %+v", r)
	}
}

func TestQueueFilters(t *testing.T) {
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want url.Values
	}{
		{[]string{"-u", "alice,bob", "-u", "carol", "--user=alice"}, url.Values{"user": {"alice", "bob", "carol"}}},
		{[]string{"--me"}, url.Values{"user": {me}}},
		{[]string{"-t", "PD,r"}, url.Values{"state": {"PENDING", "RUNNING"}}},
		{[]string{"--states=completed", "-t", "CA"}, url.Values{"state": {"COMPLETED", "CANCELLED"}, "all": {"1"}}},
		{[]string{"-t", "all"}, url.Values{"all": {"1"}}},
		{[]string{"-t", "CG"}, url.Values{"completing": {"1"}}}, // the flag, shown in ST
		{[]string{"-t", "pd,completing"}, url.Values{"state": {"PENDING"}, "completing": {"1"}}},
		{[]string{"-j", "5,6", "--jobs", "7"}, url.Values{"id": {"5", "6", "7"}, "all": {"1"}}},
		{[]string{"-ualice", "-tR", "-j9"}, url.Values{"user": {"alice"}, "state": {"RUNNING"}, "id": {"9"}, "all": {"1"}}},
	} {
		f := MustFakeCtld(t)
		if r := f.run(append([]string{"queue"}, tc.args...)...); r.code != 0 {
			t.Errorf("%q: exit %d, %s", tc.args, r.code, r.stderr)
			continue
		}
		got := f.MustOneRequest(t).Query
		if v := got.Get("view"); v != "brief" {
			t.Errorf("%q: view=%q, want brief (the table's columns only)", tc.args, v)
		}
		got.Del("view")
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q sent %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestQueueBadFilters(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "PD,XX"}, `corral queue: unknown job state "XX" (valid: PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL or their short codes)`},
		{[]string{"-j", "5,x"}, `corral queue: invalid job id "x": use a positive number`},
		{[]string{"-j", "-1"}, `corral queue: invalid job id "-1": use a positive number`},
	} {
		f := MustFakeCtld(t)
		mustFail(t, f.run(append([]string{"queue"}, tc.args...)...), 2, tc.want)
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%q reached the controller", tc.args)
		}
	}
}

func TestQueueJSON(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.run("queue", "--json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "[") {
		t.Fatalf("%+v", r)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("%d jobs, want 4", len(got))
	}
	for _, key := range []string{"id", "name", "user", "partition", "state", "reason", "submit_time", "start_time",
		"end_time", "exit_code", "cpus", "mem_bytes", "nodes"} {
		for _, j := range got {
			if _, ok := j[key]; !ok {
				t.Errorf("job %v lacks %q", j["id"], key)
			}
		}
	}
	if got[0]["id"].(float64) != 1 || got[0]["state"] != "COMPLETED" || got[0]["exit_code"].(float64) != 0 {
		t.Errorf("first job = %v", got[0])
	}
}
