package sched

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// fairHarness: a 4-CPU node, 2 CPUs busy for an hour. Job 1 (lowest
// priority, eligible two hours ago) and job 2 (highest, just arrived)
// need the whole node for an hour; job 3 (arrived last) needs 2 CPUs for
// half an hour.
func fairHarness(t *testing.T) *Harness {
	return NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(4).Time(time.Hour).Prio(1).Submitted(T0.Add(-2*time.Hour)).Obj(),
			MakeJob(2).CPUs(4).Time(time.Hour).Prio(100).Submitted(T0.Add(-time.Minute)).Obj(),
			MakeJob(3).CPUs(2).Time(30*time.Minute).Prio(50).Submitted(T0).Obj(),
		)
}

func fairStartOf(t *testing.T, v *PlanView, id uint64) time.Time {
	t.Helper()
	for _, f := range v.FairStarts {
		if f.JobID == id {
			return f.At
		}
	}
	t.Fatalf("no fair start for job %d in %+v", id, v.FairStarts)
	return time.Time{}
}

// A fair start is the start in eligibility order with a reservation for
// every job ahead, whatever the priorities: job 1 at 1h (when the
// running job ends), job 2 after it at 2h, job 3 now beside the running
// job, since it ends before job 1's reservation.
func TestFairStartIsConservativeInEligibilityOrder(t *testing.T) {
	v := fairHarness(t).Plan(Backfill{Mode: EASY, GuardFairStart: 1, GuardFairMin: 24 * time.Hour})
	for id, want := range map[uint64]time.Duration{1: time.Hour, 2: 2 * time.Hour, 3: 0} {
		if got := fairStartOf(t, v, id); !got.Equal(T0.Add(want)) {
			t.Errorf("job %d: fair start %v, want %v", id, got.Sub(T0), want)
		}
	}
	// Off, the plan computes none.
	if w := fairHarness(t).Plan(Backfill{Mode: EASY, GuardAfter: time.Hour}); len(w.FairStarts) != 0 {
		t.Fatalf("fair starts without GuardFairStart: %+v", w.FairStarts)
	}
}

// A job's fair start is computed once: a job that has one keeps its
// reservation in the pass (the jobs after it are placed around it) but
// is not reported again.
func TestFairStartIsComputedOnce(t *testing.T) {
	h := fairHarness(t)
	h.Snap.Pending[0].FairStart = T0.Add(time.Hour)
	v := h.Plan(Backfill{Mode: EASY, GuardFairStart: 1, GuardFairMin: 24 * time.Hour})
	if len(v.FairStarts) != 2 {
		t.Fatalf("fair starts %+v, want jobs 2 and 3 only", v.FairStarts)
	}
	if got := fairStartOf(t, v, 2); !got.Equal(T0.Add(2 * time.Hour)) {
		t.Fatalf("job 2: fair start %v, want 2h (after job 1's reservation)", got.Sub(T0))
	}
	// Nothing left to compute: no pass, nothing reported.
	for i := range h.Snap.Pending {
		h.Snap.Pending[i].FairStart = T0
	}
	if w := h.Plan(Backfill{Mode: EASY, GuardFairStart: 1}); len(w.FairStarts) != 0 {
		t.Fatalf("fair starts recomputed: %+v", w.FairStarts)
	}
}

// Job 1 has waited 2 hours of the 4 its fair start promised (T0 + 2h):
// guarded from half of it, it is reserved first, before job 2's higher
// priority; at three quarters, or with a floor of 3 hours, it is not
// guarded yet and priority decides. GuardAfter stays the ceiling.
func TestFairStartGuardsAfterAShareOfTheFairWait(t *testing.T) {
	plan := func(b Backfill) *PlanView {
		h := fairHarness(t)
		h.Snap.Pending[0].FairStart = T0.Add(2 * time.Hour)
		return h.Plan(b)
	}
	guarded := func(v *PlanView) {
		t.Helper()
		v.MustWait(1, api.ReasonPriority, time.Hour) // reasons go by priority
		v.MustWait(2, api.ReasonResources, 2*time.Hour)
	}
	byPriority := func(v *PlanView) {
		t.Helper()
		v.MustWait(2, api.ReasonResources, time.Hour)
		v.MustWait(1, api.ReasonPriority, 2*time.Hour)
	}
	for _, mode := range []Mode{EASY, Conservative} {
		guarded(plan(Backfill{Mode: mode, GuardFairStart: 0.5}))
		byPriority(plan(Backfill{Mode: mode, GuardFairStart: 0.75}))
		byPriority(plan(Backfill{Mode: mode, GuardFairStart: 0.5, GuardFairMin: 3 * time.Hour}))
		guarded(plan(Backfill{Mode: mode, GuardFairStart: 0.75, GuardAfter: 2 * time.Hour}))
	}
}

// A job that fits on no up node has no fair start (it is tried again in
// the next plan), and holds nobody's up in the pass.
func TestFairStartOfAJobThatNeverFits(t *testing.T) {
	h := fairHarness(t).Pending(MakeJob(4).CPUs(8).Time(time.Hour).Submitted(T0.Add(-3 * time.Hour)).Obj())
	v := h.Plan(Backfill{Mode: EASY, GuardFairStart: 1, GuardFairMin: 24 * time.Hour})
	for _, f := range v.FairStarts {
		if f.JobID == 4 {
			t.Fatalf("job 4 cannot fit but has a fair start: %+v", f)
		}
	}
	if got := fairStartOf(t, v, 1); !got.Equal(T0.Add(time.Hour)) {
		t.Fatalf("job 1: fair start %v, want 1h", got.Sub(T0))
	}
}

// On any snapshot, a job's fair start is the start conservative
// backfilling gives it when priorities follow eligibility: the pass is
// that plan, not an approximation of it.
func TestPropertyFairStartIsConservativeByEligibility(t *testing.T) {
	forEachRandomSnapshot(t, 40, []Mode{EASY}, func(t *testing.T, s Snapshot, _ Mode) {
		fair := Backfill{Mode: EASY, GuardFairStart: 1, GuardFairMin: 1000 * time.Hour}.Plan(s)
		s.Pending = slices.Clone(s.Pending)
		order := make([]int, len(s.Pending))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			x, y := &s.Pending[a], &s.Pending[b]
			if c := x.Submit.Compare(y.Submit); c != 0 {
				return c
			}
			return cmp.Compare(x.ID, y.ID)
		})
		for rank, i := range order {
			s.Pending[i].Priority = int64(len(order) - rank)
		}
		want := map[uint64]time.Time{}
		cons := Backfill{Mode: Conservative}.Plan(s)
		for _, st := range cons.Starts {
			want[st.JobID] = s.Now
		}
		for _, e := range cons.Pending {
			if !e.Start.IsZero() {
				want[e.JobID] = e.Start
			}
		}
		got := map[uint64]time.Time{}
		for _, f := range fair.FairStarts {
			got[f.JobID] = f.At
		}
		if len(got) != len(want) {
			t.Fatalf("%d fair starts, conservative plans %d jobs", len(got), len(want))
		}
		for id, w := range want {
			if !got[id].Equal(w) {
				t.Fatalf("job %d: fair start %v, conservative by eligibility %v", id, got[id].Sub(T0), w.Sub(T0))
			}
		}
	})
}
