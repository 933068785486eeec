package sim

import (
	"math/rand"
	"slices"
	"testing"
)

// TestOrderPendingSortsAsThePlanner: nearly ordered queues (a few jobs
// moved, new ones at the end) and shuffled ones, past the insertion
// budget, come out in the planner's order.
func TestOrderPendingSortsAsThePlanner(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := range 300 {
		n := rng.Intn(300)
		jobs := make([]*simJob, n)
		for i := range jobs {
			sub := int64(rng.Intn(10))
			jobs[i] = &simJob{Record: Record{Submit: sub}, prio: int64(rng.Intn(20)), submitted: at(sub), pos: i}
		}
		want := slices.Clone(jobs)
		slices.SortFunc(want, func(a, b *simJob) int {
			if a.prio != b.prio {
				return int(b.prio - a.prio)
			}
			if c := a.submitted.Compare(b.submitted); c != 0 {
				return c
			}
			return a.pos - b.pos
		})
		in := slices.Clone(want)
		if round%3 == 0 {
			rng.Shuffle(n, func(a, b int) { in[a], in[b] = in[b], in[a] })
		} else {
			for range rng.Intn(6) {
				if n > 1 {
					a, b := rng.Intn(n), rng.Intn(n)
					in[a], in[b] = in[b], in[a]
				}
			}
		}
		orderPending(in)
		if !slices.Equal(in, want) {
			t.Fatalf("round %d: not in the planner's order", round)
		}
	}
}
