package sched

import (
	"slices"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// GuardWindow reserves for guarded jobs beyond the oldest only if they
// can start within it. Job 1 (ten hours) is the oldest and is reserved
// at 1h whatever the window; job 3 (six hours, low priority) could start
// at 2h: with a window of 30 minutes or 90 it is not reserved and goes by
// priority after job 2 (new, high priority); with 3 hours it is, as with
// no window.
func TestGuardWindowReservesOnlyWhatStartsSoon(t *testing.T) {
	h := guardHarness(t).Pending(MakeJob(3).CPUs(4).Time(time.Hour).Prio(50).Submitted(T0.Add(-6 * time.Hour)).Obj())
	for _, w := range []time.Duration{30 * time.Minute, 90 * time.Minute} {
		v := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour, GuardWindow: w})
		v.MustWait(1, api.ReasonPriority, time.Hour)
		v.MustWait(2, api.ReasonResources, 2*time.Hour)
		v.MustWait(3, api.ReasonPriority, 3*time.Hour)
	}
	v := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour, GuardWindow: 3 * time.Hour})
	v.MustWait(1, api.ReasonPriority, time.Hour)
	v.MustWait(3, api.ReasonPriority, 2*time.Hour)
	v.MustWait(2, api.ReasonResources, 3*time.Hour)
}

// GuardOverlap also reserves for the guarded jobs that can start by the
// time the oldest's reservation ends. Job 1 (oldest) is reserved at 1h
// and ends at 2h; job 3 can start at 2h and is reserved then; job 4 (5.5
// hours) could only start at 3h and goes by priority, after job 2 (the
// top job, reserved by EASY). With the window alone, neither 3 nor 4 is
// reserved and job 2 comes first.
func TestGuardOverlapReservesWhatStartsWhileTheOldestRuns(t *testing.T) {
	h := guardHarness(t).Pending(
		MakeJob(3).CPUs(4).Time(time.Hour).Prio(50).Submitted(T0.Add(-6*time.Hour)).Obj(),
		MakeJob(4).CPUs(4).Time(time.Hour).Prio(60).Submitted(T0.Add(-330*time.Minute)).Obj(),
	)
	v := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour, GuardOverlap: true})
	v.MustWait(1, api.ReasonPriority, time.Hour)
	v.MustWait(3, api.ReasonPriority, 2*time.Hour)
	v.MustWait(2, api.ReasonResources, 3*time.Hour)
	v.MustWait(4, api.ReasonPriority, 4*time.Hour)
	w := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour, GuardWindow: time.Second})
	w.MustWait(1, api.ReasonPriority, time.Hour)
	w.MustWait(2, api.ReasonResources, 2*time.Hour)
	w.MustWait(4, api.ReasonPriority, 3*time.Hour)
	w.MustWait(3, api.ReasonPriority, 4*time.Hour)
}

// A guarded job that can start now starts before any younger job,
// whatever the window: job 3 (six hours, 2 CPUs) takes the two free CPUs
// before job 2 (new, highest priority, 2 CPUs).
func TestGuardWindowStartsOldJobsThatFitFirst(t *testing.T) {
	v := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(4).Time(time.Hour).Prio(1).Submitted(T0.Add(-10*time.Hour)).Obj(),
			MakeJob(2).CPUs(2).Time(30*time.Minute).Prio(100).Submitted(T0).Obj(),
			MakeJob(3).CPUs(2).Time(30*time.Minute).Prio(2).Submitted(T0.Add(-6*time.Hour)).Obj(),
		).Plan(Backfill{Mode: EASY, Order: SmallestArea, GuardAfter: 5 * time.Hour, GuardWindow: time.Second})
	v.MustStart(3, "n1")
	v.MustNotStart(2)
	v.MustWait(1, api.ReasonPriority, time.Hour)
}

// The guard's bound with a window: the oldest guarded job of each
// partition holds a reservation that arrivals cannot move, as without
// one (TestPropertyGuardedStartNeverMovesLaterOnArrivals).
func TestPropertyGuardWindowKeepsTheOldestsStart(t *testing.T) {
	checked := 0
	forEachRandomSnapshot(t, 60, []Mode{Conservative, EASY}, func(t *testing.T, s Snapshot, mode Mode) {
		window, overlap := guarded(mode), guarded(mode)
		window.GuardWindow, overlap.GuardOverlap = 10*time.Minute, true
		for _, pl := range []Backfill{window, overlap} {
			checked += oldestKeepsItsStart(t, s, pl)
		}
	})
	if checked < 100 {
		t.Fatalf("only %d oldest guarded starts compared: the snapshots no longer exercise the guard", checked)
	}
}

// oldestKeepsItsStart plans s, then s with a burst of high-priority
// arrivals, and fails if the oldest guarded job of a partition starts
// later the second time; it returns how many it compared.
func oldestKeepsItsStart(t *testing.T, s Snapshot, pl Backfill) (checked int) {
	before := pl.Plan(s)
	later := s
	later.Pending = slices.Clone(s.Pending)
	for k := range 4 {
		later.Pending = append(later.Pending,
			MakeJob(uint64(1000+k)).CPUs(1+4*k).Time(time.Duration(10+50*k)*time.Minute).Prio(int64(500+k)).Submitted(T0).Obj())
	}
	after := pl.Plan(later)
	was, now := startsOf(before), startsOf(after)
	oldest := map[string]bool{}
	pl.GuardReserve = 1
	for _, id := range guardReserved(s, before, pl) {
		part := ""
		for _, j := range s.Pending {
			if j.ID == id {
				part = j.Partition
			}
		}
		if oldest[part] {
			continue
		}
		oldest[part] = true
		w, ok := was[id]
		if !ok {
			continue
		}
		checked++
		if n, ok := now[id]; !ok || n.After(w) {
			t.Fatalf("%+v: oldest guarded job %d was planned at %v, after arrivals at %v (ok %v)", pl, id, w.Sub(T0), n.Sub(T0), ok)
		}
	}
	return checked
}
