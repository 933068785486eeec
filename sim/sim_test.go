package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// line builds an SWF line for a job that allocated procs, ran run seconds
// and asked for req seconds.
func line(id, submit, run, procs, req, user int64) string {
	return Job{ID: id, Submit: submit, Wait: -1, Run: run, Procs: procs, AvgCPU: -1, Memory: -1,
		ReqProcs: procs, ReqTime: req, ReqMemory: -1, Status: 1, User: user, Group: 1,
		Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}.Format()
}

// MustTrace parses SWF text or fails the test.
func MustTrace(t *testing.T, lines ...string) *Trace {
	t.Helper()
	tr, err := ParseSWF(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// MustRun replays or fails, and checks what every replay must keep: no
// start before submit, runs clipped to the request, never more processors
// in use than the machine has.
func MustRun(t *testing.T, tr *Trace, cfg Config) *Result {
	t.Helper()
	res, err := Run(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		at    int64
		procs int
	}
	var evs []ev
	for _, r := range res.Records {
		if r.Start < r.Submit || r.End < r.Start || r.Run() > r.Requested {
			t.Fatalf("job %d: submit %d start %d end %d request %d", r.ID, r.Submit, r.Start, r.End, r.Requested)
		}
		evs = append(evs, ev{r.Start, r.Procs}, ev{r.End, -r.Procs})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].at != evs[b].at {
			return evs[a].at < evs[b].at
		}
		return evs[a].procs < evs[b].procs // ends first
	})
	used := 0
	for _, e := range evs {
		if used += e.procs; used > res.Procs {
			t.Fatalf("%d processors in use at %d on a %d-processor machine", used, e.at, res.Procs)
		}
	}
	return res
}

func startsOf(res *Result) map[int64]int64 {
	out := map[int64]int64{}
	for _, r := range res.Records {
		out[r.ID] = r.Start
	}
	return out
}

// fiveJobs on 4 processors: J3 needs the whole machine (head, reserved at
// 100). J5 (1 proc, 60 s) fits now and ends before 100, so EASY starts it
// at once; conservative also protects J4's reservation at 50 and makes J5
// wait until 110. FCFS starts nothing out of order.
var fiveJobs = []string{
	"; MaxProcs: 4",
	line(1, 0, 50, 2, 50, 1),
	line(2, 0, 100, 1, 100, 1),
	line(3, 1, 10, 4, 10, 1),
	line(4, 2, 40, 3, 40, 1),
	line(5, 3, 60, 1, 60, 1),
}

func TestHandMadeTraceEachPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy Policy
		starts map[int64]int64
	}{
		{PolicyFCFS, map[int64]int64{1: 0, 2: 0, 3: 100, 4: 110, 5: 110}},
		{PolicyEASY, map[int64]int64{1: 0, 2: 0, 3: 100, 4: 110, 5: 3}},
		{PolicyConservative, map[int64]int64{1: 0, 2: 0, 3: 100, 4: 50, 5: 110}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			res := MustRun(t, MustTrace(t, fiveJobs...), Config{Policy: tc.policy})
			if got := startsOf(res); fmt.Sprint(got) != fmt.Sprint(tc.starts) {
				t.Fatalf("starts %v, want %v", got, tc.starts)
			}
		})
	}
}

// With predictions, the default policy orders backfill candidates by
// their expected run time but plans them to their request. User 7's job 7
// asks for 1000 s but their last two jobs ran 100 s: when a processor
// frees at 300, it has waited 1.5 times its expected run, job 6 only 0.3
// times its 500 s, so job 7 goes first (WFP), while easy takes job 6
// first. Both fit before the reservations of jobs 5 and 8, the two oldest,
// at 2150 and 2160 even at their requests, and jobs 5 and 8 start there: a
// prediction never moves a reservation.
func TestDefaultPolicyOrdersByPrediction(t *testing.T) {
	tr := MustTrace(t,
		"; MaxProcs: 4",
		line(1, 0, 100, 1, 1000, 7),
		line(2, 0, 100, 1, 1000, 7),
		line(3, 140, 160, 1, 160, 3),   // one processor until 300
		line(4, 150, 2000, 3, 2000, 1), // three until 2150
		line(5, 151, 10, 4, 10, 2),     // reserved at 2150
		line(8, 151, 10, 4, 10, 9),     // reserved at 2160
		line(6, 152, 500, 1, 500, 8),
		line(7, 152, 100, 1, 1000, 7),
	)
	easy := startsOf(MustRun(t, tr, Config{Policy: PolicyEASY}))
	def := startsOf(MustRun(t, tr, Config{Policy: PolicyDefault}))
	if easy[6] != 300 || easy[7] != 800 {
		t.Fatalf("easy starts job 6 at %d and job 7 at %d; want 300, 800", easy[6], easy[7])
	}
	if def[7] != 300 || def[6] != 400 || def[5] != 2150 || def[8] != 2160 {
		t.Fatalf("default starts job 7 at %d, job 6 at %d, jobs 5 and 8 at %d and %d; want 300, 400, 2150, 2160",
			def[7], def[6], def[5], def[8])
	}
}

func TestKilledAtRequestAndMinusOne(t *testing.T) {
	tr := MustTrace(t,
		"; MaxProcs: 2",
		line(1, 0, 500, 1, 100, 1), // runs past its request: killed at 100
		line(2, 0, 70, 1, -1, 1),   // no request: its run time is the request
		line(3, 0, 0, 1, -1, 1),    // no request, a run under a second: a 1 s request
	)
	res := MustRun(t, tr, Config{Policy: PolicyEASY})
	byID := map[int64]Record{}
	for _, r := range res.Records {
		byID[r.ID] = r
	}
	if r := byID[1]; r.Run() != 100 || !r.Killed {
		t.Errorf("job 1: %+v, want a 100 s run, killed", r)
	}
	if r := byID[2]; r.Run() != 70 || r.Requested != 70 || r.Killed {
		t.Errorf("job 2: %+v, want 70 s, request 70", r)
	}
	if r, ok := byID[3]; !ok || r.Run() != 0 || r.Requested != 1 || r.Killed || res.Skipped != 0 {
		t.Errorf("job 3: %+v (replayed %v, %d skipped), want 0 s, request 1", r, ok, res.Skipped)
	}
}

// A job checkpointed or swapped out has a summary line and one line per
// partial run (status 2, 3 or 4) under the same job number: the replay
// runs the summary once and leaves the partial runs out. Partial-run
// status values without a summary (some logs use them for other things)
// are jobs of their own.
func TestPartialRunsLeftToTheirSummary(t *testing.T) {
	withStatus := func(l string, status int64) string {
		f := strings.Fields(l)
		f[10] = strconv.FormatInt(status, 10)
		return strings.Join(f, " ")
	}
	tr := MustTrace(t,
		"; MaxProcs: 4",
		line(1, 0, 150, 2, 200, 1),
		withStatus(line(1, 0, 100, 2, 200, 1), 2),
		withStatus(line(1, 100, 50, 2, 200, 1), 3),
		withStatus(line(2, 10, 30, 4, 60, 2), 2), // no summary: a job
		withStatus(line(3, 20, 40, 1, 60, 2), 4), // no summary: a job
	)
	res := MustRun(t, tr, Config{Policy: PolicyEASY})
	if res.Partial != 2 || res.Skipped != 0 || res.Metrics.Jobs != 3 {
		t.Fatalf("partial %d, skipped %d, replayed %d; want 2, 0 and 3", res.Partial, res.Skipped, res.Metrics.Jobs)
	}
	for _, r := range res.Records {
		if r.ID == 1 && r.Run() != 150 {
			t.Fatalf("job 1 ran %d s, want its summary's 150 s", r.Run())
		}
	}
}

func TestSkippedJobsAndErrors(t *testing.T) {
	tr := MustTrace(t,
		"; MaxProcs: 2",
		line(1, 0, 10, 3, 10, 1), // wider than the machine
		line(2, 0, -1, 1, 10, 1), // no run time
		line(3, 0, 10, 0, 10, 1), // no processors
		line(4, 5, 10, 2, 10, 1),
	)
	res := MustRun(t, tr, Config{Policy: PolicyEASY})
	if res.Skipped != 3 || res.Metrics.Jobs != 1 {
		t.Fatalf("skipped %d, replayed %d; want 3 and 1", res.Skipped, res.Metrics.Jobs)
	}
	if _, err := Run(MustTrace(t, line(1, 0, 1, 1, 1, 1)), Config{}); err == nil ||
		!strings.Contains(err.Error(), "give --procs") {
		t.Errorf("no machine size: %v", err)
	}
	if _, err := Run(tr, Config{Policy: "lifo"}); err == nil || !strings.Contains(err.Error(), `unknown policy "lifo"`) {
		t.Errorf("bad policy: %v", err)
	}
	if res := MustRun(t, MustTrace(t, fiveJobs...), Config{MaxJobs: 2, Procs: 8}); res.Metrics.Jobs != 2 || res.Procs != 8 {
		t.Errorf("--jobs 2 --procs 8: %+v", res.Metrics)
	}
}

func TestMetrics(t *testing.T) {
	recs := []Record{
		{ID: 1, User: 1, Procs: 2, Submit: 0, Start: 0, End: 100},   // bsld 1
		{ID: 2, User: 1, Procs: 2, Submit: 0, Start: 100, End: 200}, // (100+100)/100 = 2
		{ID: 3, User: 2, Procs: 1, Submit: 10, Start: 40, End: 45},  // (30+5)/10 = 3.5
		{ID: 4, User: 2, Procs: 4, Submit: 50, Start: 50, End: 50},  // max(1, 0/10) = 1
	}
	m := Compute(recs, 4)
	work := 2*100 + 2*100 + 1*5 + 0.0
	want := Metrics{Makespan: 200, Utilization: work / (4 * 200), Summary: Summary{Jobs: 4, MeanWait: (0 + 100 + 30 + 0) / 4.0,
		MedianWait: 15, MaxWait: 100, MeanBSLD: (1 + 2 + 3.5 + 1) / 4, Users: 2,
		P95Wait: 30 + 0.85*70, // between the 3rd and 4th of 0, 0, 30, 100
		// users' means 1.5 and 2.25: (3.75)^2 / (2 * (1.5^2 + 2.25^2))
		Fairness: 3.75 * 3.75 / (2 * (1.5*1.5 + 2.25*2.25))}}
	for name, pair := range map[string][2]float64{
		"utilization": {m.Utilization, want.Utilization}, "mean wait": {m.MeanWait, want.MeanWait},
		"median wait": {m.MedianWait, want.MedianWait}, "p95 wait": {m.P95Wait, want.P95Wait},
		"bsld": {m.MeanBSLD, want.MeanBSLD}, "fairness": {m.Fairness, want.Fairness},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if m.Jobs != 4 || m.Makespan != 200 || m.MaxWait != 100 || m.Users != 2 {
		t.Errorf("%+v", m)
	}
	if got := BoundedSlowdown(0, 3); got != 1 {
		t.Errorf("BoundedSlowdown(0, 3) = %v", got)
	}
}

// tracePath finds a shared trace from the repository root's sibling
// directory, ../shared/traces.
func tracePath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "traces", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trace %s not found (../shared/traces from the repository root): %v", name, err)
	}
	return p
}

func MustTraceFile(t *testing.T, path string) *Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ParseSWF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The published EASY result for this exact trace (FCFS priority, user
// estimates, 100 processors) is a mean bounded slowdown of 92.58; corral's
// replay must land within 10%.
func TestKTHEASYFidelity(t *testing.T) {
	tr := MustTraceFile(t, tracePath(t, "KTH-SP2-filtered.swf"))
	res := MustRun(t, tr, Config{Policy: PolicyEASY, Procs: 100})
	m := res.Metrics
	t.Logf("KTH EASY: %d jobs, mean bounded slowdown %.2f (published 92.58), mean wait %.0f s (published 6837)",
		m.Jobs, m.MeanBSLD, m.MeanWait)
	if m.Jobs != 28481 || res.Skipped != 0 {
		t.Fatalf("replayed %d jobs, skipped %d; want all 28481", m.Jobs, res.Skipped)
	}
	if math.Abs(m.MeanBSLD-92.58)/92.58 > 0.10 {
		t.Fatalf("mean bounded slowdown %.2f is more than 10%% from the published 92.58", m.MeanBSLD)
	}
}

// The other published KTH results, for variants the policies are built
// from: SJBF backfill order, exact run times as estimates, and EASY++
// (SJBF with predictions from the user's last two jobs). Each must land
// within 10% too.
func TestKTHPublishedVariants(t *testing.T) {
	tr := MustTraceFile(t, tracePath(t, "KTH-SP2-filtered.swf"))
	exact := &Trace{Header: tr.Header}
	for _, j := range tr.Jobs {
		j.ReqTime = j.Run
		exact.Jobs = append(exact.Jobs, j)
	}
	easy, _ := policyFor(PolicyEASY)
	sjbf := easy
	sjbf.planner = sched.Backfill{Mode: sched.EASY, Order: sched.ShortestFirst, StartsOnly: true}
	easyPP := sjbf
	easyPP.predict = true
	for _, tc := range []struct {
		name      string
		trace     *Trace
		pol       setup
		published float64
	}{
		{"EASY-SJBF", tr, sjbf, 69.41},
		{"EASY with exact run times", exact, easy, 71.72},
		{"EASY++", tr, easyPP, 63.50},
	} {
		res, err := runWith(tc.trace, Config{Policy: "variant", Procs: 100}, tc.pol)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Metrics.MeanBSLD
		t.Logf("%s: mean bounded slowdown %.2f (published %.2f)", tc.name, got, tc.published)
		if math.Abs(got-tc.published)/tc.published > 0.10 {
			t.Errorf("%s: %.2f is more than 10%% from the published %.2f", tc.name, got, tc.published)
		}
	}
}

// A site's corral.conf replaces the stock settings of the default policy,
// and only of it: PriorityType=basic with BackfillMode=conservative
// replays exactly as the conservative policy (FCFS priority, user
// estimates, every job reserved), which the stock default does not.
func TestSiteConfigReplacesTheDefault(t *testing.T) {
	tr := synthTrace(500, 64, 0.95, 7)
	site := &config.Scheduling{Basic: true, Priority: priority.DefaultConfig(), Planner: sched.Backfill{Mode: sched.Conservative}}
	starts := func(cfg Config) map[int64]int64 {
		t.Helper()
		res, err := Run(tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return startsByID(res.Records)
	}
	cons := starts(Config{Policy: PolicyConservative})
	withSite := starts(Config{Policy: PolicyDefault, Site: site})
	stock := starts(Config{Policy: PolicyDefault})
	easy := starts(Config{Policy: PolicyEASY, Site: site}) // not the default: Site is ignored
	easyAlone := starts(Config{Policy: PolicyEASY})
	differ := 0
	for id, want := range cons {
		if withSite[id] != want {
			t.Fatalf("job %d starts at %d with the site's conservative settings, at %d under the conservative policy", id, withSite[id], want)
		}
		if stock[id] != want {
			differ++
		}
		if easy[id] != easyAlone[id] {
			t.Fatalf("job %d: the site's settings changed the easy policy (%d, alone %d)", id, easy[id], easyAlone[id])
		}
	}
	if differ == 0 {
		t.Fatal("the stock default starts every job as conservative backfilling does: the check proves nothing")
	}
}

// Skipping the plan while the oldest job does not fit (fcfs, and slurm
// with equal priorities between backfill ticks) must start the same jobs
// at the same times as planning at every event: on overloaded synthetic
// traces, with ties in submit time, and with array limits and singletons
// on some jobs (which may let a plan pass over the oldest).
func TestHeadWaitsStartsWhatEveryPlanStarts(t *testing.T) {
	noBackfill := DefaultSlurmConfig()
	noBackfill.Backfill = false
	setups := map[string]setup{"slurm": slurmSetup(DefaultSlurmConfig()), "slurm, no backfill": slurmSetup(noBackfill)}
	setups["fcfs"], _ = policyFor(PolicyFCFS)
	for name, pol := range setups {
		if !pol.inOrder {
			t.Fatalf("%s: not in order", name)
		}
		every := pol
		every.inOrder = false
		for seed := uint64(1); seed <= 4; seed++ {
			checkSameStarts(t, name, seed, pol, every)
		}
	}
}

func checkSameStarts(t *testing.T, name string, seed uint64, pol, every setup) {
	t.Helper()
	tr := synthTrace(800, 64, 1.2, seed)
	if seed%2 == 0 {
		for i := range tr.Jobs {
			j := &tr.Jobs[i]
			j.Submit -= j.Submit % 600 // ties: arrivals in bursts
			switch i % 7 {
			case 0:
				j.Array, j.ArrayMax = int64(1+i%3), 1
			case 1:
				j.Singleton, j.Executable = 1, 1
			}
		}
	}
	sameReplays(t, fmt.Sprintf("%s, seed %d", name, seed), tr, pol, every)
}

// sameReplays fails unless tr replays every job under got as under want.
func sameReplays(t *testing.T, what string, tr *Trace, gotPol, wantPol setup) {
	t.Helper()
	got, err := runWith(tr, Config{}, gotPol)
	if err != nil {
		t.Fatal(err)
	}
	want, err := runWith(tr, Config{}, wantPol)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Records) != len(want.Records) {
		t.Fatalf("%s: %d jobs replayed, want %d", what, len(got.Records), len(want.Records))
	}
	for i := range want.Records {
		if got.Records[i] != want.Records[i] {
			t.Fatalf("%s: job %d ran as %+v, want %+v", what, i, got.Records[i], want.Records[i])
		}
	}
}

// Plans that return starts alone (sched.Backfill.StartsOnly: conservative
// stops once nothing left can start, easy filters and heaps its
// candidates) must start the same jobs at the same times as full plans,
// under every policy the planner runs, on the same overloaded traces.
func TestStartsOnlyReplaysAsFullPlans(t *testing.T) {
	for _, p := range []Policy{PolicyFCFS, PolicyEASY, PolicyConservative, PolicyDefault} {
		pol, err := policyFor(p)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := pol.planner.(sched.Backfill)
		if !ok || !b.StartsOnly {
			t.Fatalf("%s: the planner is %T, not a Backfill with StartsOnly", p, pol.planner)
		}
		full := pol
		b.StartsOnly = false
		full.planner = b
		for seed := uint64(1); seed <= 4; seed++ {
			checkSameStarts(t, string(p), seed, pol, full)
		}
	}
}
