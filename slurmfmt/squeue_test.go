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
		{"E", "(null)", "(null)"}, // a running job's dependency was satisfied
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

// TestUncutFields: squeue cuts values to their column, but not
// durations or node lists (Slurm 22.05's squeue -l printed a 2-day limit
// whole under TIME_LIMI); a pending job's (reason) is cut as any value.
func TestUncutFields(t *testing.T) {
	env := &Env{Now: testNow}
	long := running()
	long.TimeLimit = 2 * 86400
	long.Nodes = []string{"dev1", "dev3", "gpu7"}
	for _, tc := range []struct {
		format string
		j      *api.Job
		want   string
	}{
		{"%.9l", long, "2-00:00:00"},
		{"%.5L", long, "1-22:58:55"},
		{"%.3M", long, "1:01:05"},
		{"%.4N", long, "dev[1,3],gpu7"},
		{"%.4R", long, "dev[1,3],gpu7"},
		{"%.4R", pending(), "(Pri"},
		{"%.4j", long, "trai"},
		{"%.4Y", pending(), "dev3"},
	} {
		l, _ := NewJobLayout(ParsePercent(tc.format), false)
		if got := l.Row(tc.j, env); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.format, got, tc.want)
		}
	}
	l, _ := NewJobLayout(ParsePercent("%.4N|%.4R|%.4l"), false)
	if got, want := l.Header(), "NODELIST|NODELIST(REASON)|TIME"; got != want {
		t.Errorf("header %q, want %q (node list headers are not cut)", got, want)
	}
}

// TestHeldAsSlurm: a job held at submit (sbatch -H) is JobHeldUser with
// priority 0 in Slurm, and sorts after the others by priority.
func TestHeldAsSlurm(t *testing.T) {
	env := &Env{Now: testNow}
	held := pending()
	held.Reason, held.Hold, held.Priority = api.ReasonJobHeld, "user", 5000
	admin := pending()
	admin.Reason, admin.Hold = api.ReasonJobHeldAdmin, "admin"
	l, _ := NewJobLayout(ParsePercent("%r|%Q|%p|%R"), false)
	if got, want := l.Row(held, env), "JobHeldUser|0|0.00000000000000|(JobHeldUser)"; got != want {
		t.Errorf("held: %q, want %q", got, want)
	}
	if got, want := l.Row(admin, env), "JobHeldAdmin|0|0.00000000000000|(JobHeldAdmin)"; got != want {
		t.Errorf("held by root: %q, want %q", got, want)
	}
	other := pending()
	other.ID, other.Priority = 51, 10
	jobs := []api.Job{*held, *other}
	if err := SortJobs(jobs, "-p", testNow); err != nil {
		t.Fatal(err)
	}
	if jobs[0].ID != 51 {
		t.Errorf("by priority the held job (0) comes last: got %d, %d", jobs[0].ID, jobs[1].ID)
	}
}

// TestDependencyAsSlurm: the conditions a pending job still waits for,
// marked (unfulfilled), or (failed) once they cannot hold, as
// squeue -o %E printed them; (null) once satisfied.
func TestDependencyAsSlurm(t *testing.T) {
	dep := func(reason api.Reason, anyOf bool) *api.Job {
		j := pending()
		j.Reason = reason
		j.Spec.Dependency = &api.Dependency{Any: anyOf, Conditions: []api.DependencyCondition{
			{Type: api.DependAfterOK, JobID: 41}, {Type: api.DependAfterAny, JobID: 40}}}
		return j
	}
	for _, tc := range []struct {
		j    *api.Job
		want string
	}{
		{dep(api.ReasonDependency, false), "afterok:41(unfulfilled),afterany:40(unfulfilled)"},
		{dep(api.ReasonDependency, true), "afterok:41(unfulfilled)?afterany:40(unfulfilled)"},
		{dep(api.ReasonDependencyNeverSatisfied, false), "afterok:41(failed),afterany:40(failed)"},
		{dep(api.ReasonPriority, false), "(null)"},
		{pending(), "(null)"},
	} {
		if got := dependency(tc.j); got != tc.want {
			t.Errorf("%s: %%E = %q, want %q", tc.j.Reason, got, tc.want)
		}
	}
}

// TestAllFields: squeue -o %all's header as Slurm 22.05 printed it.
func TestAllFields(t *testing.T) {
	const slurm = "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|JOBID|NAME|COMMENT|" +
		"TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|USER|RESERVATION|WCKEY|EXC_NODES|NICE|S:C:T|" +
		"JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|ARRAY_JOB_ID|GROUP|SOCKETS_PER_NODE|CORES_PER_SOCKET|THREADS_PER_CORE|" +
		"ARRAY_TASK_ID|TIME_LEFT|TIME|NODELIST|CONTIGUOUS|PARTITION|PRIORITY|NODELIST(REASON)|START_TIME|STATE|UID|" +
		"SUBMIT_TIME|LICENSES|CORE_SPEC|SCHEDNODES|WORK_DIR"
	l, unknown := NewJobLayout(AllFields(), false)
	if len(unknown) > 0 {
		t.Fatalf("unknown %v", unknown)
	}
	if got, want := l.Header(), slurm; got != want {
		t.Errorf("%%all header\n%s\nwant\n%s", got, want)
	}
	row := strings.Split(l.Row(running(), &Env{Now: testNow}), "|")
	if len(row) != 52 || row[8] != "42" || row[27] != "dev1" || row[51] != "/home/alice" {
		t.Errorf("%%all row %q", row)
	}
}

// A finished job whose parts are still stopping is COMPLETING, as
// squeue and scontrol show it, whatever its end state.
func TestCompletingAsSlurm(t *testing.T) {
	j := running()
	j.State, j.EndTime, j.Completing = api.StateFailed, at("2026-03-04T11:59:00"), true
	env := &Env{Now: testNow}
	if got := jobFields["t"].value(j, env); got != "CG" {
		t.Errorf("%%t = %q, want CG", got)
	}
	if got := jobFields["T"].value(j, env); got != "COMPLETING" {
		t.Errorf("%%T = %q, want COMPLETING", got)
	}
	j.CompletingNodes = []string{"dev2"}
	for _, k := range []string{"N", "R"} {
		if got := jobFields[k].value(j, env); got != "dev2" {
			t.Errorf("%%%s = %q, want the node still completing, dev2", k, got)
		}
	}
	j.Completing, j.CompletingNodes = false, nil
	if got := jobFields["N"].value(j, env); got != "dev[1-2]" {
		t.Errorf("%%N once every part stopped = %q, want dev[1-2]", got)
	}
	if got := jobFields["t"].value(j, env); got != "F" {
		t.Errorf("%%t once every part stopped = %q, want F", got)
	}
}
