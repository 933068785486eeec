package sched

import (
	"math/rand"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// packHarness: an 8-CPU node with 4 CPUs busy for an hour, a top job
// that needs all 8 (reserved at 1h), and three half-hour candidates: job
// 2 (1 CPU, the smallest area, so first in area order) and jobs 3 and 4
// (2 CPUs each). Greedy takes 2 and 3 and leaves a CPU idle; the set {3,
// 4} fills the 4 free CPUs.
func packHarness(t *testing.T) *Harness {
	return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).
		Running(MakeRunning(100).On("n1", 4).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(8).Time(time.Hour).Prio(10).Obj(),
			MakeJob(2).CPUs(1).Time(30*time.Minute).Prio(5).Obj(),
			MakeJob(3).CPUs(2).Time(30*time.Minute).Prio(4).Obj(),
			MakeJob(4).CPUs(2).Time(30*time.Minute).Prio(3).Obj(),
		)
}

func TestPackStartsTheSetThatFillsTheIdleCPUs(t *testing.T) {
	greedy := packHarness(t).Plan(Backfill{Mode: EASY, Order: SmallestArea})
	greedy.MustStart(2, "n1")
	greedy.MustStart(3, "n1")
	greedy.MustNotStart(4)

	packed := packHarness(t).Plan(Backfill{Mode: EASY, Order: SmallestArea, Pack: 3})
	packed.MustStart(3, "n1")
	packed.MustStart(4, "n1")
	packed.MustNotStart(2)
	packed.MustWait(1, api.ReasonResources, time.Hour) // the reservation holds

	// Only the first Pack candidates that fit are chosen from: with 2,
	// the set is {2, 3}, as greedy's, and job 4 no longer fits.
	two := packHarness(t).Plan(Backfill{Mode: EASY, Order: SmallestArea, Pack: 2})
	two.MustStart(2, "n1")
	two.MustStart(3, "n1")
	two.MustNotStart(4)
}

// A set member that would delay the reservation does not start. Job 1
// needs 6 of the 8 CPUs at 1h, so after 1h only 2 are spare: jobs 5 and
// 6 (2 CPUs, two hours) each fit now on their own, not together. The
// knapsack picks both (4 CPUs, the first two candidates); job 6 is then
// refused, and greedy fills its CPUs with job 7, which ends before 1h.
func TestPackKeepsTheReservation(t *testing.T) {
	v := NewHarness(t, MakeNode("n1").CPUs(8).Obj()).
		Running(MakeRunning(100).On("n1", 4).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(6).Time(time.Hour).Prio(10).Obj(),
			MakeJob(5).CPUs(2).Time(2*time.Hour).Prio(6).Obj(),
			MakeJob(6).CPUs(2).Time(2*time.Hour).Prio(5).Obj(),
			MakeJob(7).CPUs(2).Time(30*time.Minute).Prio(4).Obj(),
		).Plan(Backfill{Mode: EASY, Order: ByPriority, Pack: 4})
	v.MustStart(5, "n1")
	v.MustNotStart(6)
	v.MustStart(7, "n1")
	v.MustWait(1, api.ReasonResources, time.Hour)
}

// knapsack against brute force: the chosen set fits, no subset has a
// larger sum, and among the best it takes each earlier item when it can.
func TestKnapsackIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 2000 {
		n := 1 + rng.Intn(10)
		weights := make([]int, n)
		for k := range weights {
			weights[k] = 1 + rng.Intn(20)
		}
		capacity := rng.Intn(60)
		got := knapsack(weights, capacity)
		sum := 0
		var mask int
		for k, i := range got {
			if k > 0 && got[k-1] >= i {
				t.Fatalf("round %d: indexes %v not increasing", round, got)
			}
			sum += weights[i]
			mask |= 1 << (n - 1 - i) // earlier items weigh more in the mask
		}
		if sum > capacity {
			t.Fatalf("round %d: %v of %v sums %d over %d", round, got, weights, sum, capacity)
		}
		bestSum, bestMask := 0, 0
		for m := 0; m < 1<<n; m++ {
			s := 0
			for i := range n {
				if m&(1<<(n-1-i)) != 0 {
					s += weights[i]
				}
			}
			if s <= capacity && (s > bestSum || s == bestSum && m > bestMask) {
				bestSum, bestMask = s, m
			}
		}
		if sum != bestSum || mask != bestMask {
			t.Fatalf("round %d: weights %v capacity %d: chose %v (sum %d), best sum %d (mask %b, got %b)",
				round, weights, capacity, got, sum, bestSum, bestMask, mask)
		}
	}
}

// Over packScale the capacity is counted in coarser units, and a chosen
// set still fits the true capacity.
func TestKnapsackScaledNeverOverfills(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for range 200 {
		weights := make([]int, 1+rng.Intn(30))
		for k := range weights {
			weights[k] = 1 + rng.Intn(3000)
		}
		capacity := packScale + rng.Intn(20000)
		sum := 0
		for _, i := range knapsack(weights, capacity) {
			sum += weights[i]
		}
		if sum > capacity {
			t.Fatalf("weights %v: chose %d over capacity %d", weights, sum, capacity)
		}
	}
}
