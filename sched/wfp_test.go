package sched

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// TestSortByWFPIsAStableSortByScore: candidates come out by WFP, largest
// first, and equal scores (common: jobs submitted together with equal
// requests) keep their priority order, plain and ranked, also when some
// are left out; startsOnlyByWFP's heap pops them in that order.
func TestSortByWFPIsAStableSortByScore(t *testing.T) {
	if rankWeight(0, 7) != 2 || rankWeight(3, 7) != 1.5 || rankWeight(6, 7) != 1 || rankWeight(0, 1) != 2 {
		t.Fatalf("rank weights %v %v %v %v, want 2 1.5 1 2", rankWeight(0, 7), rankWeight(3, 7), rankWeight(6, 7), rankWeight(0, 1))
	}
	rng := rand.New(rand.NewSource(9))
	for round := range 200 {
		n := rng.Intn(60)
		reqs := make([]request, n)
		order := make([]int, n)
		for i := range reqs {
			reqs[i] = request{Pending: &Pending{Submit: T0.Add(-time.Duration(rng.Intn(3)) * time.Hour)},
				count: 1, need: Resources{CPUs: 1 + rng.Intn(2)}, expect: int64(time.Duration(1+rng.Intn(2)) * time.Hour)}
			order[i] = i
		}
		rng.Shuffle(n, func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, ranked := range []bool{false, true} {
			score := make(map[int]float64, n)
			for k, i := range order {
				score[i] = reqs[i].wfp(T0)
				if ranked {
					score[i] *= rankWeight(k, n)
				}
			}
			want := slices.Clone(order)
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
			got := slices.Clone(order)
			got = sortByWFP(got, reqs, T0, ranked, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, ranked %v: %v, want %v", round, ranked, got, want)
			}
			// startsOnlyByWFP's heap yields them in the same order.
			var h wfpHeap
			for k, i := range order {
				h = append(h, wfpCandidate{i: i, k: k, score: score[i]})
			}
			h.init()
			for k := range want {
				if i := h.pop(); i != want[k] {
					t.Fatalf("round %d, ranked %v: the heap's %d-th is %d, want %d", round, ranked, k, i, want[k])
				}
			}
			// Leaving candidates out keeps the others' ranks and order.
			narrow := func(i int) bool { return reqs[i].need.CPUs == 1 }
			got = sortByWFP(slices.Clone(order), reqs, T0, ranked, narrow)
			if want = slices.DeleteFunc(want, func(i int) bool { return !narrow(i) }); !slices.Equal(got, want) {
				t.Fatalf("round %d, ranked %v, one-CPU candidates: %v, want %v", round, ranked, got, want)
			}
		}
	}
}
