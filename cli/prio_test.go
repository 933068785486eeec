package cli

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// schedulingRoutes answers GET /v1/prio and /v1/share with f.prio and
// f.share (set them before running a command).
func (f *fakeCtld) schedulingRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/prio", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, 200, f.prio)
	})
	mux.HandleFunc("GET /v1/share", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, 200, f.share)
	})
}

// fixturePrio: bob's jobs are heavy users' (low fairshare), carol's is an
// array remainder; weights leave JOBSIZE at 0 so its column is hidden.
func fixturePrio() api.PrioResponse {
	factor := func(v float64, w int64) api.PrioFactor {
		return api.PrioFactor{Value: v, Weight: w, Part: int64(v*float64(w) + 0.5)}
	}
	job := func(id uint64, ref, user string, age, fs float64, nice int) api.JobPrio {
		j := api.JobPrio{JobID: id, Job: ref, Partition: "batch", User: user, Account: "physics", Nice: nice,
			Age: factor(age, 1000), Fairshare: factor(fs, 10000), JobSize: factor(0.5, 0)}
		j.Priority = j.Age.Part + j.Fairshare.Part + j.JobSize.Part - int64(nice)
		return j
	}
	return api.PrioResponse{Weights: api.PrioWeights{Age: 1000, Fairshare: 10000},
		Jobs: []api.JobPrio{
			job(5, "5", "bob", 0.25, 0.5, 0),        // 250 + 5000 = 5250
			job(7, "7", "alice", 0.125, 1, 0),       // 125 + 10000 = 10125
			job(9, "9_[1-3]", "carol", 0.5, 0.5, 0), // 500 + 5000 = 5500
			job(12, "12", "bob", 0, 0.5, 100),       // 5000 - 100 = 4900
		}}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// jobColumn returns the first column of a table's rows (not the header).
func jobColumn(stdout string) []string {
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var out []string
	for _, l := range lines[1:] {
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

func TestPrioTable(t *testing.T) {
	f := MustFakeCtld(t)
	f.prio = fixturePrio()
	r := f.run("prio")
	want := "" +
		"JOBID    PARTITION  USER   PRIORITY  AGE  FAIRSHARE\n" +
		"5        batch      bob    5250      250  5000\n" +
		"7        batch      alice  10125     125  10000\n" +
		"9_[1-3]  batch      carol  5500      500  5000\n" +
		"12       batch      bob    4900      0    5000\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	if req := f.MustOneRequest(t); req.Path != "/v1/prio" || len(req.Query) != 0 {
		t.Errorf("request %s?%s", req.Path, req.Query.Encode())
	}
}

func TestPrioSort(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-S", "y"}, []string{"7", "9_[1-3]", "5", "12"}}, // the seed's sprio -Sy: highest first
		{[]string{"-Sy"}, []string{"7", "9_[1-3]", "5", "12"}},
		{[]string{"-S", "-y"}, []string{"7", "9_[1-3]", "5", "12"}},
		{[]string{"--sort=+y"}, []string{"12", "5", "9_[1-3]", "7"}},
		{[]string{"-S", "-i"}, []string{"12", "9_[1-3]", "7", "5"}},
		{[]string{"-S", "u,-y"}, []string{"7", "5", "12", "9_[1-3]"}},
		{[]string{"-S", "uy"}, []string{"7", "5", "12", "9_[1-3]"}},
		{[]string{"-S", "f,a"}, []string{"7", "9_[1-3]", "5", "12"}},
		{[]string{"-S", "+F,+A"}, []string{"12", "5", "9_[1-3]", "7"}},
		{[]string{"-S", "N"}, []string{"5", "7", "9_[1-3]", "12"}},
	} {
		f := MustFakeCtld(t)
		f.prio = fixturePrio()
		r := f.run(append([]string{"prio"}, tc.args...)...)
		if r.code != 0 {
			t.Errorf("%q: exit %d, %s", tc.args, r.code, r.stderr)
			continue
		}
		if got := jobColumn(r.stdout); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q listed %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestPrioBadSort(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"x", `corral prio: invalid sort field "x" in "x" (valid: i job ID, y priority, u user, r or p partition, a age, f fairshare, j job size, N nice)`},
		{"y-", `corral prio: invalid sort "y-": - must come right before a field letter`},
		{"+-y", `corral prio: invalid sort "+-y": + must come right before a field letter`},
		{",", `corral prio: invalid sort ",": give at least one field letter`},
	} {
		f := MustFakeCtld(t)
		mustFail(t, f.run("prio", "--sort="+tc.spec), 2, tc.want)
		if n := len(f.Requests()); n != 0 {
			t.Errorf("-S %q reached the controller", tc.spec)
		}
	}
}

func TestPrioLongNormWeights(t *testing.T) {
	f := MustFakeCtld(t)
	f.prio = fixturePrio()
	r := f.run("prio", "-l", "-n", "-j", "12")
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || !regexpMatch(`^JOBID +PARTITION +USER +ACCOUNT +PRIORITY +AGE +FAIRSHARE +NICE$`, lines[0]) ||
		!regexpMatch(`^12 +batch +bob +physics +4900 +0\.0000000 +0\.5000000 +100$`, lines[4]) {
		t.Fatalf("-l -n: exit %d %s\n%s", r.code, r.stderr, r.stdout)
	}
	if q := f.MustOneRequest(t).Query; !reflect.DeepEqual(q, url.Values{"id": {"12"}}) {
		t.Errorf("-j 12 sent %v", q)
	}
	f = MustFakeCtld(t)
	f.prio = fixturePrio()
	r = f.run("prio", "-w")
	if r.code != 0 || r.stdout != "JOBID    PARTITION  USER  PRIORITY  AGE   FAIRSHARE\nWeights                             1000  10000\n" {
		t.Fatalf("-w: exit %d %s\n%q", r.code, r.stderr, r.stdout)
	}
	r = f.run("prio", "-w", "--json")
	var w api.PrioWeights
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &w) != nil || w != f.prio.Weights {
		t.Fatalf("-w --json: %+v", r)
	}
}

func TestPrioUsersAndJSON(t *testing.T) {
	f := MustFakeCtld(t)
	f.prio = fixturePrio()
	r := f.run("prio", "-u", "bob,carol", "--user=bob", "--json", "-S", "y")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if q := f.MustOneRequest(t).Query; !reflect.DeepEqual(q, url.Values{"user": {"bob", "carol"}}) {
		t.Errorf("-u sent %v", q)
	}
	var got api.PrioResponse
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	// The JSON keeps every field and follows -S.
	if got.Weights != f.prio.Weights || len(got.Jobs) != 4 || got.Jobs[0].JobID != 7 || got.Jobs[3].JobID != 12 ||
		got.Jobs[0].Fairshare != f.prio.Jobs[1].Fairshare || got.Jobs[3].Nice != 100 {
		t.Errorf("JSON: %+v", got)
	}
	f = MustFakeCtld(t)
	if r := f.run("prio"); r.code != 0 || r.stdout != "JOBID  PARTITION  USER  PRIORITY\n" {
		t.Errorf("no jobs, no weights: %+v", r)
	}
}

func TestShareTable(t *testing.T) {
	f := MustFakeCtld(t)
	fs := func(v float64) *float64 { return &v }
	f.share = api.ShareResponse{Algorithm: "fair_tree", Time: time.Now(), Rows: []api.ShareRow{
		{Account: "root", RawShares: 1, NormShares: 1, RawUsage: 3000, EffectvUsage: 1},
		{Account: "physics", Depth: 1, RawShares: 2, NormShares: 2.0 / 3, RawUsage: 3000, EffectvUsage: 1},
		{Account: "physics", User: "alice", Parent: "physics", Depth: 2, RawShares: 1, NormShares: 2.0 / 3,
			RawUsage: 3000.4, EffectvUsage: 1, FairShare: fs(0.5)},
		{Account: "default", Depth: 1, RawShares: 1, NormShares: 1.0 / 3},
		{Account: "default", User: "bob", Parent: "default", Depth: 2, RawShares: 1.5, NormShares: 1.0 / 3, FairShare: fs(1)},
	}}
	r := f.run("share")
	want := "" +
		"Account    User   RawShares  NormShares  RawUsage  EffectvUsage  FairShare\n" +
		"root                         1.000000    3000      1.000000\n" +
		" physics          2          0.666667    3000      1.000000\n" +
		"  physics  alice  1          0.666667    3000      1.000000      0.500000\n" +
		" default          1          0.333333    0         0.000000\n" +
		"  default  bob    1.5        0.333333    0         0.000000      1.000000\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	r = f.run("share", "-u", "alice", "--json")
	var got api.ShareResponse
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || len(got.Rows) != 5 || *got.Rows[2].FairShare != 0.5 {
		t.Fatalf("--json: %+v", r)
	}
	if q := f.Requests()[1].Query; !reflect.DeepEqual(q, url.Values{"user": {"alice"}}) {
		t.Errorf("-u sent %v", q)
	}
	mustFail(t, f.run("share", "extra"), 2, `corral share: unexpected argument "extra"`)
}

func TestQueueStart(t *testing.T) {
	f := MustFakeCtld(t)
	at := func(s string) *time.Time {
		tm, err := time.ParseInLocation(startTimeLayout, s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return &tm
	}
	f.jobs = []api.Job{
		{ID: 3, Name: "run", User: "alice", Partition: "batch", State: api.StateRunning, NodeCount: 1, Nodes: []string{"n1"}},
		{ID: 4, Name: "later", User: "bob", Partition: "batch", State: api.StatePending, Reason: api.ReasonPriority,
			NodeCount: 2, PlannedStart: at("2030-05-01T12:00:00"), PlannedNodes: []string{"n1", "n2"}},
		{ID: 5, Name: "held", User: "bob", Partition: "batch", State: api.StatePending, Reason: api.ReasonJobHeld, NodeCount: 1},
		{ID: 6, Name: "soon", User: "carol", Partition: "gpu", State: api.StatePending, Reason: api.ReasonResources,
			NodeCount: 1, PlannedStart: at("2030-05-01T10:30:00"), PlannedNodes: []string{"g3"}},
	}
	r := f.run("queue", "--start")
	want := "" +
		"JOBID  PARTITION  NAME   USER   ST  START_TIME           NODES  SCHEDNODES  NODELIST(REASON)\n" +
		"6      gpu        soon   carol  PD  2030-05-01T10:30:00  1      g3          (Resources)\n" +
		"4      batch      later  bob    PD  2030-05-01T12:00:00  2      n[1-2]      (Priority)\n" +
		"5      batch      held   bob    PD  N/A                  1      (null)      (JobHeld)\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	r = f.run("queue", "--start", "--json")
	var got []api.Job
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || len(got) != 3 || got[0].ID != 6 ||
		got[0].PlannedStart == nil || !got[0].PlannedStart.Equal(*at("2030-05-01T10:30:00")) {
		t.Fatalf("--start --json: %+v", r)
	}
}
