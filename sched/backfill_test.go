package sched

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

var allModes = []Mode{Conservative, EASY, FCFS}

// gapHarness: a 4-CPU node with 2 CPUs busy for an hour, and a top-priority
// 4-CPU job that must wait for them. Job 2 fits in the gap in front of the
// reservation; job 3 is too long for it.
func gapHarness(t *testing.T, extra ...Pending) *Harness {
	h := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
		Pending(MakeJob(1).CPUs(4).Time(time.Hour).Prio(10).Obj())
	return h.Pending(extra...)
}

func TestShortJobBackfillsIntoGap(t *testing.T) {
	for _, mode := range []Mode{Conservative, EASY} {
		t.Run(string(mode), func(t *testing.T) {
			short := MakeJob(2).CPUs(2).Time(30 * time.Minute).Prio(5).Obj()
			without := gapHarness(t).Plan(Backfill{Mode: mode})
			with := gapHarness(t, short).Plan(Backfill{Mode: mode})
			with.MustStart(2, "n1")
			a := without.MustWait(1, api.ReasonResources, time.Hour)
			b := with.MustWait(1, api.ReasonResources, time.Hour)
			if !a.Start.Equal(b.Start) {
				t.Fatalf("backfilling moved the reservation from %v to %v", a.Start, b.Start)
			}
		})
	}
}

func TestJobTooLongForGapDoesNotBackfill(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			long := MakeJob(3).CPUs(2).Time(61 * time.Minute).Prio(5).Obj()
			v := gapHarness(t, long).Plan(Backfill{Mode: mode})
			v.MustWait(1, api.ReasonResources, time.Hour)
			// After job 1's hour, at T0+2h.
			v.MustWait(3, api.ReasonPriority, 2*time.Hour)
		})
	}
}

func TestFCFSDoesNotBackfill(t *testing.T) {
	short := MakeJob(2).CPUs(2).Time(30 * time.Minute).Prio(5).Obj()
	v := gapHarness(t, short).Plan(Backfill{Mode: FCFS})
	v.MustWait(1, api.ReasonResources, time.Hour)
	// It would fit now, but FCFS keeps order: it cannot start before job 1,
	// which holds the whole node for [1h, 2h).
	v.MustWait(2, api.ReasonPriority, 2*time.Hour)
}

// In EASY only the top job is protected: job 3 may start now although it
// delays job 2's estimate; conservative protects job 2's reservation too.
func TestEASYProtectsOnlyTheTopJob(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(
			MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj(),
			MakeRunning(101).On("n1", 1).Ends(30*time.Minute).Obj(),
		).
		Pending(
			MakeJob(1).CPUs(4).Time(time.Hour).Prio(30).Obj(),      // reserved at 1h
			MakeJob(2).CPUs(2).Time(30*time.Minute).Prio(20).Obj(), // fits [30m, 1h)
			MakeJob(3).CPUs(1).Time(50*time.Minute).Prio(10).Obj(), // fits now, ends before 1h
		)
	cons := h.Plan(Backfill{Mode: Conservative})
	cons.MustWait(1, api.ReasonResources, time.Hour)
	cons.MustWait(2, api.ReasonPriority, 30*time.Minute)
	cons.MustWait(3, api.ReasonPriority, 2*time.Hour)

	easy := h.Plan(Backfill{Mode: EASY})
	easy.MustWait(1, api.ReasonResources, time.Hour)
	easy.MustStart(3)
	easy.MustWait(2, api.ReasonPriority, 2*time.Hour)
}

func TestEASYShortestFirstOrder(t *testing.T) {
	// Two candidates compete for the same 2 free CPUs before the
	// reservation; SJBF picks the shorter one although it has lower priority.
	h := gapHarness(t,
		MakeJob(2).CPUs(2).Time(50*time.Minute).Prio(5).Obj(),
		MakeJob(3).CPUs(2).Time(10*time.Minute).Prio(4).Obj(),
	)
	h.Plan(Backfill{Mode: EASY}).MustStart(2)
	h.Plan(Backfill{Mode: EASY, Order: ShortestFirst}).MustStart(3)
}

func TestMultiNodeJobs(t *testing.T) {
	h := func(t *testing.T) *Harness {
		return NewHarness(t,
			MakeNode("a").CPUs(4).Obj(), MakeNode("b").CPUs(4).Obj(), MakeNode("c").CPUs(4).Obj()).
			Running(
				MakeRunning(100).On("a", 4).Ends(time.Hour).Obj(),
				MakeRunning(101).On("b", 4).Ends(2*time.Hour).Obj(),
			).
			Pending(
				MakeJob(1).Nodes(2).CPUs(4).Time(time.Hour).Prio(10).Obj(),
				MakeJob(2).Nodes(3).CPUs(1).Time(time.Hour).Prio(5).Obj(),
				MakeJob(3).Nodes(1).CPUs(4).Time(time.Hour).Prio(1).Obj(),
			)
	}
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			v := h(t).Plan(Backfill{Mode: mode})
			e := v.MustWait(1, api.ReasonResources, time.Hour)
			if len(e.Nodes) != 2 || e.Nodes[0] != "a" || e.Nodes[1] != "c" {
				t.Fatalf("job 1 planned on %v, want [a c]", e.Nodes)
			}
			v.MustWait(2, api.ReasonPriority, 2*time.Hour)
			if mode == FCFS {
				// Not before job 2, and job 2 leaves only 3 CPUs per node.
				v.MustWait(3, api.ReasonPriority, 3*time.Hour)
			} else {
				// c is free for exactly one hour before job 1 needs it.
				v.MustStart(3, "c")
			}
		})
	}
}

func TestReasons(t *testing.T) {
	h := func(t *testing.T) *Harness {
		return NewHarness(t, MakeNode("n1").CPUs(2).Obj(), MakeNode("d1").CPUs(8).Down().Obj()).
			Partitions(
				Partition{Name: "batch", Nodes: []string{"n1"}, DefaultTime: time.Hour, MaxTime: 2 * time.Hour},
				Partition{Name: "dead", Nodes: []string{"d1"}},
			).
			Running(MakeRunning(100).On("n1", 2).Ends(30*time.Minute).Obj()).
			Pending(
				MakeJob(1).Time(3*time.Hour).Prio(9).Obj(),
				MakeJob(2).Part("dead").Prio(8).Obj(),
				MakeJob(3).Part("nosuch").Prio(7).Obj(),
				MakeJob(4).Blocked(api.ReasonDependency).Prio(6).Obj(),
				MakeJob(5).Prio(5).Obj(), // default time 1h
				MakeJob(6).Prio(4).Obj(),
				MakeJob(7).CPUs(3).Prio(3).Obj(), // larger than every up node
			)
	}
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			v := h(t).Plan(Backfill{Mode: mode})
			v.MustWait(1, api.ReasonPartitionTimeLimit, -1)
			v.MustWait(2, api.ReasonNodeDown, -1)
			v.MustWait(3, api.ReasonNodeDown, -1)
			v.MustWait(4, api.ReasonDependency, -1)
			v.MustWait(5, api.ReasonResources, 30*time.Minute)
			v.MustWait(6, api.ReasonPriority, 30*time.Minute)
			v.MustWait(7, api.ReasonPriority, -1)
		})
	}
}

func TestNoLimitUsesDefaultThenMaximum(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(1).Obj()).
		Partitions(Partition{Name: "batch", Nodes: []string{"n1"}, MaxTime: 3 * time.Hour}).
		Pending(MakeJob(1).Prio(2).Obj(), MakeJob(2).Prio(1).Obj())
	v := h.Plan(Backfill{})
	v.MustStart(1)
	v.MustWait(2, api.ReasonResources, 3*time.Hour)
}

func TestDepthLimitsPlanning(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(1).Obj()).Pending(
		MakeJob(1).Time(time.Hour).Prio(3).Obj(),
		MakeJob(2).Time(time.Hour).Prio(2).Obj(),
		MakeJob(3).Time(time.Hour).Prio(1).Obj(),
	)
	v := h.Plan(Backfill{Depth: 2})
	v.MustStart(1)
	v.MustWait(2, api.ReasonResources, time.Hour)
	v.MustWait(3, api.ReasonPriority, -1)
	full := h.Plan(Backfill{})
	full.MustWait(3, api.ReasonPriority, 2*time.Hour)
}

func TestRunningJobEnds(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(2).Obj()).
		Running(
			MakeRunning(100).On("n1", 1).Ends(-time.Minute).Obj(), // overdue: still holds its CPU
			MakeRunning(101).On("n1", 1).Obj(),                    // no end known: holds forever
		).
		Pending(MakeJob(1).Time(time.Hour).Obj(), MakeJob(2).CPUs(2).Time(time.Hour).Obj())
	v := h.Plan(Backfill{})
	v.MustWait(1, api.ReasonResources, 1)
	v.MustWait(2, api.ReasonPriority, -1)
}

func TestMemoryAndGPUAreResources(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(8).Mem(4*GiB).FGPU(100).Obj()).
		Running(MakeRunning(100).OnRes("n1", Resources{CPUs: 1, MemBytes: 3 * GiB, FGPU: 50}).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).Mem(2*GiB).Time(time.Hour).Prio(3).Obj(),
			MakeJob(2).FGPU(50).Time(time.Hour).Prio(2).Obj(),
			MakeJob(3).FGPU(60).Time(time.Hour).Prio(1).Obj(),
		)
	v := h.Plan(Backfill{})
	v.MustWait(1, api.ReasonResources, time.Hour)
	v.MustStart(2)
	v.MustWait(3, api.ReasonPriority, time.Hour)
}

func TestBinPackingPrefersFullerNode(t *testing.T) {
	h := NewHarness(t, MakeNode("big").CPUs(8).Obj(), MakeNode("small").CPUs(2).Obj()).
		Pending(MakeJob(1).CPUs(2).Time(time.Hour).Obj())
	h.Plan(Backfill{}).MustStart(1, "small")
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"easy": EASY, "EASY": EASY, "conservative": Conservative, "fcfs": FCFS} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Fatalf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("lifo"); err == nil {
		t.Fatal("ParseMode(lifo) accepted")
	}
}

// A job larger than every up node never runs; it must not hold the queue.
func TestJobThatCanNeverRunHoldsNobodyUp(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			v := NewHarness(t, MakeNode("n1").CPUs(2).Obj()).Pending(
				MakeJob(1).CPUs(4).Time(time.Hour).Prio(9).Obj(),
				MakeJob(2).CPUs(2).Time(time.Hour).Prio(5).Obj(),
				MakeJob(3).CPUs(2).Time(time.Hour).Prio(1).Obj(),
			).Plan(Backfill{Mode: mode})
			v.MustWait(1, api.ReasonResources, -1)
			v.MustStart(2)
			v.MustWait(3, api.ReasonPriority, time.Hour)
		})
	}
}

// WFP tries first the candidate that has waited longest for its run
// time, cubed, times its CPUs; RankedWFP weighs that by priority, 2 for
// the top candidate to 1 for the last. Two 2-CPU, 30-minute candidates
// fit the gap one at a time: job 2 (priority 5) has waited 31 minutes,
// job 3 (priority 8) 30. WFP takes job 2, RankedWFP job 3; job 4, the
// lowest priority but waiting an hour, goes before both under either.
func TestWFPOrders(t *testing.T) {
	cand := func(id uint64, prio int64, waited time.Duration) Pending {
		return MakeJob(id).CPUs(2).Time(30 * time.Minute).Prio(prio).Submitted(T0.Add(-waited)).Obj()
	}
	two := []Pending{cand(2, 5, 31*time.Minute), cand(3, 8, 30*time.Minute)}
	gapHarness(t, two...).Plan(Backfill{Mode: EASY, Order: WFP}).MustStart(2, "n1")
	gapHarness(t, two...).Plan(Backfill{Mode: EASY, Order: RankedWFP}).MustStart(3, "n1")
	for _, o := range []Order{WFP, RankedWFP} {
		v := gapHarness(t, append(two, cand(4, 1, time.Hour))...).Plan(Backfill{Mode: EASY, Order: o})
		v.MustStart(4, "n1")
		v.MustNotStart(2)
		v.MustNotStart(3)
	}
}
