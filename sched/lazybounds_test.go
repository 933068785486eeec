package sched

import (
	"math/rand"
	"testing"
	"time"
)

// TestCaughtUpBoundsMatchFreshBounds: on a lazy node, reservations only
// mark thresholds stale; a threshold caught up after any number of them
// must hold exactly the bounds a fresh computation gives.
func TestCaughtUpBoundsMatchFreshBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	caught := 0
	for round := 0; round < 200; round++ {
		capa := []int{4, 16, 100, 130, 8192}[rng.Intn(5)]
		n := &nodeState{capacity: cpus(capa), tl: newTimeline(cpus(capa)), lazy: true}
		n.initBounds()
		for k := 0; k < 60; k++ {
			need := cpus(1 + rng.Intn(min(capa, 200)))
			dur := int64(time.Duration(1+rng.Intn(600)) * time.Minute)
			if rng.Intn(10) == 0 {
				dur = never
			}
			from := int64(time.Duration(rng.Intn(2000)) * time.Minute)
			if at := n.tl.earliest(need, dur, from, never); at != never {
				n.markStale(at, satAdd(at, dur), n.tl.reserve(need, at, satAdd(at, dur)))
			}
			if rng.Intn(3) != 0 {
				continue
			}
			c := rng.Intn(cpuLevels)
			if cpuThresholds[c] > capa {
				continue
			}
			n.catchUp(c*numDur + rng.Intn(numDur))
			if !n.stale[c].empty() {
				t.Fatalf("round %d step %d: threshold %d still stale after catching up", round, k, c)
			}
			fresh := &nodeState{capacity: n.capacity, tl: n.tl}
			fresh.initBounds()
			row := func(x *nodeState) []int64 { return x.hole[c*numDur : (c+1)*numDur] }
			if got, want := row(n), row(fresh); n.tail[c] != fresh.tail[c] || !equalRows(got, want) {
				t.Fatalf("round %d step %d: threshold %d caught up to tail %d holes %v, fresh tail %d holes %v",
					round, k, cpuThresholds[c], n.tail[c], got, fresh.tail[c], want)
			}
			caught++
		}
	}
	if caught < 1000 {
		t.Fatalf("only %d catch-ups checked", caught)
	}
}

func equalRows(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestLazyOnlyAlone: a node is lazy only when every partition it is in
// has it alone; one shared with another node keeps its tree up to date.
func TestLazyOnlyAlone(t *testing.T) {
	s := Snapshot{
		Nodes: []Node{{Name: "a", Capacity: cpus(8), Up: true}, {Name: "b", Capacity: cpus(8), Up: true}, {Name: "c", Capacity: cpus(8), Up: true}},
		Partitions: []Partition{{Name: "solo", Nodes: []string{"a"}}, {Name: "pair", Nodes: []string{"b", "c"}},
			{Name: "solo-c", Nodes: []string{"c"}}},
	}
	got := map[string]bool{}
	for _, n := range newProfile(s, nil).nodes {
		got[n.name] = n.lazy
	}
	if !got["a"] || got["b"] || got["c"] {
		t.Fatalf("lazy = %v, want only a", got)
	}
}
