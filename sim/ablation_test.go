package sim

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// TestAblation replays traces under policies spelled as comma-separated
// choices, to measure each design choice of the default policy on its
// own (docs/scheduling.md). It is a measuring tool, not a check: it runs
// only when asked, e.g.
//
//	CORRAL_ABLATION='easy;easy,fairshare,guard=12h' \
//	CORRAL_TRACES=../shared/traces/KTH-SP2-filtered.swf go test ./sim -run Ablation -v
//
// Choices: easy or conservative; order=priority|shortest|area|slowdown;
// guard=DURATION (BackfillGuardAfter); predict (expected run times order
// backfill); fairshare (the stock multifactor priority instead of FCFS);
// maxage=DURATION; guardk=N (GuardReserve); size=N (the size weight);
// favorsmall; gwindow=DURATION (GuardWindow); goverlap (GuardOverlap);
// pack=N (Pack); packfill (PackFill); record (recordGuard); fair=SHARE
// and fairmin=DURATION (GuardFairStart and GuardFairMin: guarded after
// that share of the wait to the fair start); oracle (with fair=: each
// job's fair start is its start in an EASY replay of the same trace, a
// clairvoyant bound on what a fair-start guard can do, not a policy).
//
// A trace is an SWF file or synth:JOBS:PROCS:LOAD:SEED (synthTrace's
// workload). CORRAL_SHAKE=N replays N shaken copies of each trace (60 s
// jitter, seed 1) and prints the means. When the first configuration
// is easy, each other one is also scored against it: per trace, its
// figures over easy's, and whether it beats easy on mean bounded
// slowdown, mean wait and max wait at equal or higher utilization.
func TestAblation(t *testing.T) {
	spec, traces := os.Getenv("CORRAL_ABLATION"), os.Getenv("CORRAL_TRACES")
	if spec == "" || traces == "" {
		t.Skip("a measuring tool: set CORRAL_ABLATION and CORRAL_TRACES to run it")
	}
	shakes := 0
	if v := os.Getenv("CORRAL_SHAKE"); v != "" {
		var err error
		if shakes, err = strconv.Atoi(v); err != nil || shakes < 0 {
			t.Fatalf("CORRAL_SHAKE=%s: want a number of replays", v)
		}
	}
	names, paths := strings.Split(spec, ";"), strings.Split(traces, ",")
	base := map[string]headline{} // easy's, by trace
	wins := map[string]int{}
	for _, name := range names {
		pol, err := ablationSetup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			tr, err := ablationTrace(path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ablationReplay(tr, name, pol, shakes)
			if err != nil {
				t.Fatal(err)
			}
			short := path[strings.LastIndex(path, "/")+1:]
			fmt.Printf("%-45s %-22s bsld %8.2f  wait %9.0f  max %9.0f  util %.4f  jain %.3f\n",
				name, short, h.bsld, h.wait, h.max, h.util, h.jain)
			if name == names[0] && name == "easy" {
				base[path] = h
			} else if e, ok := base[path]; ok {
				win := h.bsld < e.bsld && h.wait < e.wait && h.max < e.max && h.util >= e.util-1e-4
				if win {
					wins[name]++
				}
				fmt.Printf("%-45s %-22s vs easy: bsld %.2f  wait %.2f  max %.2f  util %+.4f  %v\n",
					"", short, h.bsld/e.bsld, h.wait/e.wait, h.max/e.max, h.util-e.util, map[bool]string{true: "WIN", false: "-"}[win])
			}
		}
	}
	if len(base) > 0 {
		for _, name := range names[1:] {
			fmt.Printf("%-45s beats easy on %d of %d traces\n", name, wins[name], len(paths))
		}
	}
}

// headline is what TestAblation prints, a mean over shaken replays.
type headline struct{ bsld, wait, max, util, jain float64 }

// ablationReplay replays tr, or the mean over shakes shaken copies of it.
func ablationReplay(tr *Trace, name string, pol setup, shakes int) (headline, error) {
	copies := []*Trace{tr}
	if shakes > 0 {
		copies = copies[:0]
		for i := range shakes {
			copies = append(copies, Shake(tr, 60, 1, i))
		}
	}
	var h headline
	for _, c := range copies {
		if pol.fairStarts != nil {
			easy, err := easyStarts(c)
			if err != nil {
				return h, err
			}
			pol.fairStarts = easy
		}
		if g, ok := pol.planner.(*recordGuard); ok {
			g.record = 0 // each replay starts with no history
		}
		res, err := runWith(c, Config{Policy: Policy(name)}, pol)
		if err != nil {
			return h, err
		}
		if k, _ := strconv.Atoi(os.Getenv("CORRAL_TOPWAIT")); k > 0 && shakes == 0 {
			printTopWaits(res.Records, k)
		}
		m, n := res.Metrics, float64(len(copies))
		h.bsld += m.MeanBSLD / n
		h.wait += m.MeanWait / n
		h.max += float64(m.MaxWait) / n
		h.util += m.Utilization / n
		h.jain += m.Fairness / n
	}
	return h, nil
}

// easyStarts replays tr under EASY and returns each job's start by job
// ID: the ablation choice oracle's fair starts, which no online policy
// knows (they depend on later arrivals and actual run times), so that
// the best a guard from fair starts could do is measured.
func easyStarts(tr *Trace) (map[int64]int64, error) {
	pol, err := policyFor(PolicyEASY)
	if err != nil {
		return nil, err
	}
	res, err := runWith(tr, Config{Policy: PolicyEASY}, pol)
	if err != nil {
		return nil, err
	}
	return startsByID(res.Records), nil
}

// startsByID is each record's start by job ID.
func startsByID(rs []Record) map[int64]int64 {
	starts := make(map[int64]int64, len(rs))
	for _, r := range rs {
		starts[r.ID] = r.Start
	}
	return starts
}

// printTopWaits prints the k jobs that waited longest (CORRAL_TOPWAIT=k),
// to see which job sets a maximum wait and why.
func printTopWaits(recs []Record, k int) {
	rs := slices.Clone(recs)
	slices.SortFunc(rs, func(a, b Record) int { return cmp.Compare(b.Wait(), a.Wait()) })
	for _, r := range rs[:min(k, len(rs))] {
		fmt.Printf("  wait %8d job %7d user %4d procs %5d submit %9d run %8d req %8d\n",
			r.Wait(), r.ID, r.User, r.Procs, r.Submit, r.Run(), r.Requested)
	}
}

func ablationSetup(name string) (setup, error) {
	s := setup{priority: fcfsPriority()}
	b := sched.Backfill{Mode: sched.EASY, StartsOnly: true}
	var maxAge time.Duration
	size := int64(-1)
	favorSmall, record := false, false
	for _, f := range strings.Split(name, ",") {
		key, val, _ := strings.Cut(f, "=")
		var err error
		switch key {
		case "easy", "conservative":
			b.Mode, err = sched.ParseMode(key)
		case "order":
			b.Order, err = sched.ParseOrder(val)
		case "guard":
			b.GuardAfter, err = time.ParseDuration(val)
		case "predict":
			s.predict = true
		case "fairshare":
			s.priority = priority.DefaultConfig()
		case "maxage":
			maxAge, err = time.ParseDuration(val)
		case "fair":
			b.GuardFairStart, err = strconv.ParseFloat(val, 64)
		case "fairmin":
			b.GuardFairMin, err = time.ParseDuration(val)
		case "guardk":
			b.GuardReserve, err = strconv.Atoi(val)
		case "size":
			size, err = strconv.ParseInt(val, 10, 64)
		case "favorsmall":
			favorSmall = true
		case "goverlap":
			b.GuardOverlap = true
		case "gwindow":
			b.GuardWindow, err = time.ParseDuration(val)
		case "oldest":
			b.ReserveOldest, err = strconv.Atoi(val)
		case "oldafter":
			b.ReserveOldestAfter, err = time.ParseDuration(val)
		case "oracle":
			s.fairStarts = map[int64]int64{} // easyStarts fills it per trace
		case "packfill":
			b.PackFill = true
		case "pack":
			b.Pack, err = strconv.Atoi(val)
		case "record":
			record = true
		default:
			err = fmt.Errorf("unknown choice %q", f)
		}
		if err != nil {
			return s, err
		}
	}
	if s.fairStarts != nil && b.GuardFairStart == 0 {
		return s, fmt.Errorf("oracle gives the fair starts that fair=SHARE guards from: add fair=")
	}
	if maxAge > 0 {
		s.priority.MaxAge = maxAge
	}
	if size >= 0 {
		s.priority.Weights.Size = size
	}
	s.priority.FavorSmall = s.priority.FavorSmall || favorSmall
	s.planner = b
	if record {
		s.planner = &recordGuard{inner: b}
	}
	return s, nil
}

// ablationTrace reads an SWF file, or generates synthTrace's workload
// for a name synth:JOBS:PROCS:LOAD:SEED (e.g. synth:5000:128:0.9:1).
func ablationTrace(name string) (*Trace, error) {
	if spec, ok := strings.CutPrefix(name, "synth:"); ok {
		var n, procs int
		var load float64
		var seed uint64
		if _, err := fmt.Sscanf(strings.ReplaceAll(spec, ":", " "), "%d %d %g %d", &n, &procs, &load, &seed); err != nil {
			return nil, fmt.Errorf("%s: want synth:JOBS:PROCS:LOAD:SEED: %v", name, err)
		}
		return synthTrace(n, procs, load, seed), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSWF(f)
}
