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

// PackFill fills the drain before a reservation: job 1 needs all 8 CPUs
// at 1h and 4 are free until then. Job 2 (4 CPUs, 5 minutes) comes first
// and fills them now, so Pack, counting CPUs now, takes it alone; jobs 3
// and 4 (2 CPUs, 50 minutes each) fill the same CPUs ten times as long
// before the reservation, so PackFill takes them. Job 5 (2 CPUs, 2
// hours) would run past the reservation and is worth nothing to a fill.
func TestPackFillFillsTheDrain(t *testing.T) {
	harness := func() *Harness {
		return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).
			Running(MakeRunning(100).On("n1", 4).Ends(time.Hour).Obj()).
			Pending(
				MakeJob(1).CPUs(8).Time(time.Hour).Prio(10).Obj(),
				MakeJob(2).CPUs(4).Time(5*time.Minute).Prio(6).Obj(),
				MakeJob(3).CPUs(2).Time(50*time.Minute).Prio(5).Obj(),
				MakeJob(4).CPUs(2).Time(50*time.Minute).Prio(4).Obj(),
				MakeJob(5).CPUs(2).Time(2*time.Hour).Prio(3).Obj(),
			)
	}
	cpus := harness().Plan(Backfill{Mode: EASY, Order: ByPriority, Pack: 4})
	cpus.MustStart(2, "n1")
	cpus.MustNotStart(3)
	cpus.MustNotStart(4)

	fill := harness().Plan(Backfill{Mode: EASY, Order: ByPriority, Pack: 4, PackFill: true})
	fill.MustStart(3, "n1")
	fill.MustStart(4, "n1")
	fill.MustNotStart(2)
	fill.MustNotStart(5)
	fill.MustWait(1, api.ReasonResources, time.Hour)
}

// A candidate that would run past the reservation, on CPUs the reserved
// job leaves spare, fills nothing of the drain: job 1 needs 6 of the 8
// CPUs at 1h, so job 6 (2 CPUs, 3 hours) fits now on its own, and so do
// jobs 7 and 8 (2 CPUs, 50 minutes). Pack takes the first two, 6 and 7;
// PackFill takes 7 and 8, and 6 waits.
func TestPackFillPassesOverAJobRunningPastTheReservation(t *testing.T) {
	harness := func() *Harness {
		return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).
			Running(MakeRunning(100).On("n1", 4).Ends(time.Hour).Obj()).
			Pending(
				MakeJob(1).CPUs(6).Time(time.Hour).Prio(10).Obj(),
				MakeJob(6).CPUs(2).Time(3*time.Hour).Prio(6).Obj(),
				MakeJob(7).CPUs(2).Time(50*time.Minute).Prio(5).Obj(),
				MakeJob(8).CPUs(2).Time(50*time.Minute).Prio(4).Obj(),
			)
	}
	cpus := harness().Plan(Backfill{Mode: EASY, Order: ByPriority, Pack: 3})
	cpus.MustStart(6, "n1")
	cpus.MustStart(7, "n1")
	cpus.MustNotStart(8)

	fill := harness().Plan(Backfill{Mode: EASY, Order: ByPriority, Pack: 3, PackFill: true})
	fill.MustStart(7, "n1")
	fill.MustStart(8, "n1")
	fill.MustNotStart(6)
	fill.MustWait(1, api.ReasonResources, time.Hour)
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
// larger value, and among the best it takes each earlier item when it
// can. Half the rounds value items by their weight (Pack's CPUs), half
// independently (PackFill's processor time).
func TestKnapsackIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 4000 {
		n := 1 + rng.Intn(10)
		weights := make([]int, n)
		values := make([]int64, n)
		for k := range weights {
			weights[k] = 1 + rng.Intn(20)
			values[k] = int64(weights[k])
			if round%2 == 1 {
				values[k] = 1 + rng.Int63n(50)
			}
		}
		capacity := rng.Intn(60)
		got := knapsack(weights, values, capacity)
		sum, value := 0, int64(0)
		var mask int
		for k, i := range got {
			if k > 0 && got[k-1] >= i {
				t.Fatalf("round %d: indexes %v not increasing", round, got)
			}
			sum += weights[i]
			value += values[i]
			mask |= 1 << (n - 1 - i) // earlier items weigh more in the mask
		}
		if sum > capacity {
			t.Fatalf("round %d: %v of %v sums %d over %d", round, got, weights, sum, capacity)
		}
		bestValue, bestMask := int64(0), 0
		for m := 0; m < 1<<n; m++ {
			s, v := 0, int64(0)
			for i := range n {
				if m&(1<<(n-1-i)) != 0 {
					s += weights[i]
					v += values[i]
				}
			}
			if s <= capacity && (v > bestValue || v == bestValue && m > bestMask) {
				bestValue, bestMask = v, m
			}
		}
		if value != bestValue || mask != bestMask {
			t.Fatalf("round %d: weights %v values %v capacity %d: chose %v (value %d), best %d (mask %b, got %b)",
				round, weights, values, capacity, got, value, bestValue, bestMask, mask)
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
		values := make([]int64, len(weights))
		for k := range values {
			values[k] = 1 + rng.Int63n(1000)
		}
		for _, i := range knapsack(weights, values, capacity) {
			sum += weights[i]
		}
		if sum > capacity {
			t.Fatalf("weights %v: chose %d over capacity %d", weights, sum, capacity)
		}
	}
}

// PackFill's values are processor-nanoseconds, capped so that no sum of
// them overflows: a million CPUs for a year is more than an int64 holds.
func TestFillValuesDoNotOverflow(t *testing.T) {
	part := &partState{}
	year := int64(365 * 24 * time.Hour)
	reqs := []request{{part: part, expect: year}, {part: part, expect: int64(time.Hour)}, {part: part, expect: year}}
	out := make([]outcome, len(reqs))
	values := fillValues([]int{0, 1, 2}, []int{1_000_000, 4, 1_000_000}, reqs, out, part)
	var sum int64
	for k, v := range values {
		if v <= 0 {
			t.Fatalf("value %d is %d", k, v)
		}
		if sum += v; sum <= 0 {
			t.Fatalf("the values %v overflow when added", values)
		}
	}
	if values[1] != 4*int64(time.Hour) {
		t.Fatalf("4 CPUs for an hour are worth %d, want %d", values[1], 4*int64(time.Hour))
	}
	if values[0] <= values[1] {
		t.Fatalf("a million CPUs for a year (%d) are worth no more than 4 for an hour (%d)", values[0], values[1])
	}
}
