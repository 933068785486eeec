package sim

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// TestWidthsKnowTheNarrowest: after any arrivals and starts, narrowest
// is the least width pending, as a pass over the queue finds it.
func TestWidthsKnowTheNarrowest(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var w widths
	var pending []int
	for step := range 20000 {
		if len(pending) == 0 || rng.Intn(2) == 0 {
			p := 1 + rng.Intn(1+rng.Intn(64))
			pending = append(pending, p)
			w.add(p)
		} else {
			i := rng.Intn(len(pending))
			w.remove(pending[i])
			pending = slices.Delete(pending, i, i+1)
		}
		want := math.MaxInt
		if len(pending) > 0 {
			want = slices.Min(pending)
		}
		if got := w.narrowest(); got != want {
			t.Fatalf("step %d: narrowest = %d, want %d (pending %v)", step, got, want, pending)
		}
	}
}
