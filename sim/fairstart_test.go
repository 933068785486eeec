package sim

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/sched"
)

// fairRecorder is a fair-start planner that checks what the replay does
// with the fair starts it returns.
type fairRecorder struct {
	sched.Backfill
	t      *testing.T
	fair   map[uint64]time.Time // as returned
	starts map[uint64]bool
}

func (f *fairRecorder) Plan(s sched.Snapshot) sched.Plan {
	for _, j := range s.Pending {
		if want, ok := f.fair[j.ID]; ok != !j.FairStart.IsZero() || !j.FairStart.Equal(want) {
			f.t.Fatalf("at %v job %d comes with fair start %v; the planner returned %v", s.Now, j.ID, j.FairStart, want)
		}
	}
	p := f.Backfill.Plan(s)
	submit := map[uint64]time.Time{}
	for _, j := range s.Pending {
		submit[j.ID] = j.Submit
	}
	for _, x := range p.FairStarts {
		if !submit[x.JobID].Equal(s.Now) {
			f.t.Fatalf("job %d (submitted %v) got its fair start only at %v", x.JobID, submit[x.JobID], s.Now)
		}
		if _, dup := f.fair[x.JobID]; dup {
			f.t.Fatalf("job %d's fair start computed twice", x.JobID)
		}
		if x.At.Before(s.Now) {
			f.t.Fatalf("job %d's fair start %v is before now %v", x.JobID, x.At, s.Now)
		}
		f.fair[x.JobID] = x.At
	}
	for _, st := range p.Starts {
		if _, ok := f.fair[st.JobID]; !ok {
			f.t.Fatalf("job %d starts at %v without a fair start", st.JobID, s.Now)
		}
		f.starts[st.JobID] = true
	}
	return p
}

// The replay has each job's fair start computed when it arrives, even
// when no plan could start anything then, and passes it back
// unchanged in every later snapshot.
func TestReplayKeepsFairStarts(t *testing.T) {
	rec := &fairRecorder{Backfill: sched.Backfill{Mode: sched.EASY, StartsOnly: true, GuardFairStart: 0.5},
		t: t, fair: map[uint64]time.Time{}, starts: map[uint64]bool{}}
	tr := synthTrace(400, 16, 1.0, 3)
	res, err := runWith(tr, Config{Policy: "fair"}, setup{planner: rec, priority: defaultPriority()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.starts) != len(res.Records) || len(rec.fair) != len(res.Records) {
		t.Fatalf("%d jobs ran, %d started by plans, %d fair starts", len(res.Records), len(rec.starts), len(rec.fair))
	}
}

// TestGivenFairStartsReachThePlanner checks the ablation's oracle path:
// fair starts given up front (setup.fairStarts) are what the planner
// guards from. With every job's fair start at its submit time and the
// whole of that (zero) wait as the share, every job is guarded, and so
// reserved, from its arrival, oldest first: conservative backfilling in
// submit order, start for start.
func TestGivenFairStartsReachThePlanner(t *testing.T) {
	tr := synthTrace(400, 64, 0.9, 3)
	cons, err := Run(tr, Config{Policy: PolicyConservative, Reference: []Record{}})
	if err != nil {
		t.Fatal(err)
	}
	given := map[int64]int64{}
	for _, j := range tr.Jobs {
		given[j.ID] = j.Submit
	}
	guarded := setup{priority: fcfsPriority(), fairStarts: given,
		planner: sched.Backfill{Mode: sched.EASY, StartsOnly: true, GuardFairStart: 1}}
	res, err := runWith(tr, Config{Policy: "guarded"}, guarded)
	if err != nil {
		t.Fatal(err)
	}
	unguarded, err := runWith(tr, Config{Policy: "unguarded"}, setup{priority: fcfsPriority(),
		planner: sched.Backfill{Mode: sched.EASY, StartsOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	want, got, easy := startsByID(cons.Records), startsByID(res.Records), startsByID(unguarded.Records)
	differ := 0
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("job %d started at %d; conservative backfilling starts it at %d", id, got[id], w)
		}
		if easy[id] != w {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("EASY and conservative backfilling start every job alike on this workload: the check proves nothing")
	}
	t.Logf("%d of %d jobs start differently under EASY", differ, len(want))
}

// TestEasyStartsAreEASYs checks the oracle's source: easyStarts returns
// the starts of an EASY replay of the same trace.
func TestEasyStartsAreEASYs(t *testing.T) {
	tr := synthTrace(300, 32, 0.95, 5)
	got, err := easyStarts(tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(tr, Config{Policy: PolicyEASY})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(res.Records) {
		t.Fatalf("%d starts for %d jobs", len(got), len(res.Records))
	}
	for _, r := range res.Records {
		if got[r.ID] != r.Start {
			t.Fatalf("job %d: easyStarts says %d, an EASY replay %d", r.ID, got[r.ID], r.Start)
		}
	}
}
