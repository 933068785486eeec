package slurmfmt

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

var testNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

func at(s string) *time.Time {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// running is a job that started 1h01m05s before testNow on two nodes.
func running() *api.Job {
	return &api.Job{
		ID: 42, Name: "train", User: "alice", UID: 1000, GID: 100, Partition: "gpu",
		State: api.StateRunning, Priority: 2147483648, CPUs: 4, MemBytes: 3 << 30, NodeCount: 2,
		TimeLimit: 7200, SubmitTime: *at("2026-03-04T10:00:00"), StartTime: at("2026-03-04T10:58:55"),
		Nodes: []string{"dev1", "dev2"},
		Spec: api.JobSpec{Account: "ml", WorkDir: "/home/alice", Nice: 5, Comment: "c1", Constraint: "a100", NodeList: []string{"dev1", "dev2"},
			GPUsPerNode: []api.GresRequest{{Count: 2}},
			Dependency:  &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 41}}}},
	}
}

func pending() *api.Job {
	task := 3
	return &api.Job{
		ID: 50, ArrayJobID: 47, ArrayTaskID: &task, Name: "lr=0.1 run:v2", User: "bob", UID: 1001, GID: 1001,
		Partition: "debug", State: api.StatePending, Reason: api.ReasonPriority, CPUs: 1, MemBytes: 1536 << 20,
		SubmitTime: *at("2026-03-04T11:59:00"), PlannedStart: at("2026-03-04T13:00:00"), PlannedNodes: []string{"dev3"},
	}
}

func TestJobFields(t *testing.T) {
	env := &Env{Now: testNow, Group: func(gid uint32) string {
		if gid == 100 {
			return "users"
		}
		return ""
	}}
	for _, tc := range []struct{ key, run, pend string }{
		{"a", "ml", "(null)"},
		{"A", "42", "50"},
		{"b", "gres:gpu:2", "N/A"},
		{"c", "4", "1"},
		{"C", "8", "1"},
		{"D", "2", "1"},
		{"e", "2026-03-04T12:58:55", "N/A"},
		{"E", "afterok:41", "(null)"},
		{"f", "a100", "(null)"},
		{"F", "42", "47"},
		{"g", "users", "1001"},
		{"G", "100", "1001"},
		{"i", "42", "47_3"},
		{"j", "train", "lr=0.1 run:v2"},
		{"k", "c1", "(null)"},
		{"K", "N/A", "3"},
		{"l", "2:00:00", "UNLIMITED"},
		{"L", "58:55", "UNLIMITED"},
		{"m", "3G", "1536M"},
		{"M", "1:01:05", "0:00"},
		{"n", "dev[1-2]", ""},
		{"N", "dev[1-2]", ""},
		{"o", "(null)", "(null)"},
		{"p", "0.50000000011642", "0.00000000000000"},
		{"P", "gpu", "debug"},
		{"q", "(null)", "(null)"},
		{"Q", "2147483648", "0"},
		{"r", "None", "Priority"},
		{"R", "dev[1-2]", "(Priority)"},
		{"S", "2026-03-04T10:58:55", "2026-03-04T13:00:00"},
		{"t", "R", "PD"},
		{"T", "RUNNING", "PENDING"},
		{"u", "alice", "bob"},
		{"U", "1000", "1001"},
		{"V", "2026-03-04T10:00:00", "2026-03-04T11:59:00"},
		{"y", "5", "0"},
		{"Y", "(null)", "dev3"},
		{"Z", "/home/alice", "(null)"},
	} {
		f, ok := jobFields[tc.key]
		if !ok {
			t.Errorf("%%%s: no such field", tc.key)
			continue
		}
		if got := f.value(running(), env); got != tc.run {
			t.Errorf("%%%s of the running job = %q, want %q", tc.key, got, tc.run)
		}
		if got := f.value(pending(), env); got != tc.pend {
			t.Errorf("%%%s of the pending job = %q, want %q", tc.key, got, tc.pend)
		}
	}
	for name, key := range jobNames {
		if _, ok := jobFields[key]; !ok {
			t.Errorf("-O %s maps to %%%s, which is no field", name, key)
		}
	}
}

func TestJobLayoutDefault(t *testing.T) {
	l, unknown := NewJobLayout(ParsePercent(SqueueDefault), false)
	if len(unknown) > 0 {
		t.Fatalf("unknown fields in the default format: %v", unknown)
	}
	env := &Env{Now: testNow}
	got := l.Header() + "\n" + l.Row(running(), env) + "\n" + l.Row(pending(), env) + "\n"
	want := "" +
		"             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
		"                42       gpu    train    alice  R    1:01:05      2 dev[1-2]\n" +
		"              47_3     debug lr=0.1 r      bob PD       0:00      1 (Priority)\n"
	if got != want {
		t.Errorf("default squeue:\n%s\nwant:\n%s", got, want)
	}
	if l.Need != NeedBrief {
		t.Errorf("the default format needs view %d, want the brief view", l.Need)
	}
}

func TestJobLayoutLongAndNames(t *testing.T) {
	env := &Env{Now: testNow}
	l, _ := NewJobLayout(ParsePercent(SqueueLong), false)
	if got, want := l.Header(), "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)"; got != want {
		t.Errorf("-l header %q, want %q", got, want)
	}
	if got, want := l.Row(running(), env), "                42       gpu    train    alice  RUNNING    1:01:05   2:00:00      2 dev[1-2]"; got != want {
		t.Errorf("-l row %q, want %q", got, want)
	}
	l, unknown := NewJobLayout(ParseNames("JobID:6,State:.9,Name:,Bogus"), true)
	if len(unknown) != 1 || unknown[0] != "Bogus" {
		t.Errorf("unknown -O names %v, want [Bogus]", unknown)
	}
	if got, want := l.Header(), "JOBID     STATENAME"; got != want {
		t.Errorf("-O header %q, want %q", got, want)
	}
	if got, want := l.Row(pending(), env), "50      PENDINGlr=0.1 run:v2"; got != want {
		t.Errorf("-O row %q, want %q", got, want)
	}
	if l.Need != NeedBrief {
		t.Errorf("-O JobID,State,Name needs view %d", l.Need)
	}
	if l, _ := NewJobLayout(ParsePercent("%i %a"), false); l.Need != NeedFull {
		t.Errorf("%%a needs view %d, want full", l.Need)
	}
}

func TestRowKeepsOneLine(t *testing.T) {
	j := running()
	j.Name = "evil\nname"
	l, _ := NewJobLayout(ParsePercent("%j"), false)
	if got := l.Row(j, &Env{Now: testNow}); strings.Contains(got, "\n") {
		t.Errorf("row %q spans lines", got)
	}
}

func TestMemMB(t *testing.T) {
	for _, tc := range []struct {
		b    int64
		want string
	}{{0, "0"}, {1, "1M"}, {500 << 20, "500M"}, {1 << 30, "1G"}, {1536 << 20, "1536M"}, {2 << 40, "2T"}} {
		if got := MemMB(tc.b); got != tc.want {
			t.Errorf("MemMB(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
