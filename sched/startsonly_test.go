package sched

import (
	"testing"
	"time"
)

// TestStartsOnlyWFPBreaksTiesByPriority: two candidates with equal WFP
// scores (submitted now) both fit the CPUs left beside the top job's
// reservation, but only one of them fits at a time: the one ranked first
// by priority starts, with and without StartsOnly.
func TestStartsOnlyWFPBreaksTiesByPriority(t *testing.T) {
	for _, order := range []Order{WFP, RankedWFP} {
		for _, first := range []uint64{2, 3} {
			prio := map[uint64]int64{2: 5, 3: 5}
			if first == 3 {
				prio[3] = 6
			}
			h := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
				Running(MakeRunning(100).On("n1", 2).Ends(10*time.Hour).Obj()).
				Pending(MakeJob(1).Prio(10).CPUs(4).Time(time.Hour).Submitted(T0).Obj(),
					MakeJob(2).Prio(prio[2]).CPUs(2).Time(time.Hour).Submitted(T0).Obj(),
					MakeJob(3).Prio(prio[3]).CPUs(2).Time(time.Hour).Submitted(T0).Obj())
			for _, only := range []bool{false, true} {
				v := h.Plan(Backfill{Mode: EASY, Order: order, StartsOnly: only})
				v.MustStart(first)
				v.MustNotStart(5 - first)
			}
		}
	}
}
