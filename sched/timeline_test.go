package sched

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"
)

func cpus(n int) Resources { return Resources{CPUs: n} }

// mustTimeline builds a 4-CPU timeline with 2 CPUs busy until 10 and
// 4 CPUs busy over [20, 30).
func mustTimeline() timeline {
	tl := newTimeline(cpus(2))
	tl.appendSegment(10, cpus(4))
	tl.reserve(cpus(4), 20, 30, nil)
	return tl
}

func TestTimelineEarliest(t *testing.T) {
	tests := []struct {
		name             string
		need             int
		dur, from, limit int64
		want             int64
	}{
		{"fits now", 2, 5, 0, never, 0},
		{"fits now until the reservation", 2, 20, 0, never, 0},
		{"too long for the gap before the reservation", 2, 21, 0, never, 30},
		{"needs the freed CPUs", 4, 10, 0, never, 10},
		{"gap exactly as long as the job", 4, 10, 0, never, 10},
		{"gap too short", 4, 11, 0, never, 30},
		{"from inside the reservation", 1, 1, 25, never, 30},
		{"limit stops the search", 4, 11, 0, 30, never},
		{"never fits", 5, 1, 0, never, never},
		{"unlimited job fits only at the tail", 1, never, 0, never, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := mustTimeline()
			if got := tl.earliest(cpus(tc.need), tc.dur, tc.from, tc.limit); got != tc.want {
				t.Fatalf("earliest = %d, want %d (segments %+v)", got, tc.want, tl.segments())
			}
		})
	}
}

func TestTimelineReserveSplitsAndMerges(t *testing.T) {
	tl := mustTimeline()
	got := tl.segments()
	want := []segment{{0, cpus(2)}, {10, cpus(4)}, {20, cpus(0)}, {30, cpus(4)}}
	if len(got) != len(want) {
		t.Fatalf("segments %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("segment %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Filling [10, 20) with 4 CPUs makes it equal to [20, 30): they merge.
	tl.reserve(cpus(4), 10, 20, nil)
	if got := tl.segments(); len(got) != 3 || got[1] != (segment{10, cpus(0)}) || got[2].at != 30 {
		t.Fatalf("after filling the gap: %+v", got)
	}
	// An unlimited reservation changes the tail forever.
	tl.reserve(cpus(1), 40, never, nil)
	if got := tl.segments(); got[len(got)-1] != (segment{40, cpus(3)}) {
		t.Fatalf("tail = %+v, want {40 3 CPUs}", got[len(got)-1])
	}
	if got := tl.freeAt(35); got != cpus(4) {
		t.Fatalf("freeAt(35) = %+v", got)
	}
}

func TestRefreshBoundsAreLowerBounds(t *testing.T) {
	n := &nodeState{capacity: cpus(4), tl: mustTimeline()}
	n.initBounds()
	for _, need := range []int{1, 2, 3, 4} {
		for _, dur := range []int64{1, int64(time.Minute), int64(2 * time.Hour), int64(100 * time.Hour), never} {
			l := levelOf(cpus(need), dur)
			got := n.tl.earliest(cpus(need), dur, 0, never)
			if n.bound(l) > got {
				t.Fatalf("bound %d for %d CPUs x %d exceeds the real earliest start %d", n.bound(l), need, dur, got)
			}
		}
	}
	// 8 CPUs never fit on a 4-CPU node.
	if l := levelOf(cpus(8), 1); n.bound(l) != never {
		t.Fatalf("bound for 8 CPUs = %d, want never", n.bound(l))
	}
	if levelOf(Resources{MemBytes: 1}, 1) != -1 {
		t.Fatal("a job with no CPUs must not use the CPU index")
	}
}

// The incremental update after each reservation must give exactly what a
// fresh computation gives, and every bound must be the real earliest start
// at its thresholds.
func TestUpdateBoundsMatchesFreshBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for round := 0; round < 200; round++ {
		capa := []int{1, 4, 16, 100, 130}[rng.Intn(5)]
		n := &nodeState{capacity: cpus(capa), tl: newTimeline(cpus(capa))}
		n.initBounds()
		for k := 0; k < 30; k++ {
			need := cpus(1 + rng.Intn(capa))
			dur := int64(time.Duration(1+rng.Intn(600)) * time.Minute)
			if rng.Intn(10) == 0 {
				dur = never
			}
			from := int64(time.Duration(rng.Intn(2000)) * time.Minute)
			at := n.tl.earliest(need, dur, from, never)
			if at == never {
				continue
			}
			var short [cpuLevels]int64
			minFree := n.tl.reserve(need, at, satAdd(at, dur), &short)
			n.updateBounds(at, satAdd(at, dur), minFree, &short, nil, nil)
			fresh := &nodeState{capacity: n.capacity, tl: n.tl}
			fresh.initBounds()
			if fresh.hole != n.hole || fresh.tail != n.tail {
				t.Fatalf("round %d step %d: incremental bounds differ from fresh ones\nhole %v\nwant %v\ntail %v\nwant %v",
					round, k, n.hole, fresh.hole, n.tail, fresh.tail)
			}
			for l := 0; l < numLevels; l++ {
				c, d := l/numDur, l%numDur
				want := n.tl.earliest(cpus(cpuThresholds[c]), durLevels[d], 0, never)
				if cpuThresholds[c] > capa {
					want = never
				}
				if got := n.bound(l); got != want {
					t.Fatalf("level %d (%d CPUs, %v): bound %d, earliest %d", l, cpuThresholds[c], time.Duration(durLevels[d]), got, want)
				}
			}
		}
	}
}

// The profile skips sorting releases when the running jobs come by end
// (the trace simulator lists them so); in any other order, sorted, it is
// the same profile: the same segments on every node.
func TestProfileReleasesInAnyOrder(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := Snapshot{Now: now,
		Nodes:      []Node{{Name: "a", Capacity: cpus(64), Up: true}, {Name: "b", Capacity: cpus(64), Up: true}},
		Partitions: []Partition{{Name: "p", Nodes: []string{"a", "b"}}}}
	// By end, two jobs ending together, one on both nodes, one overdue.
	for i, r := range []struct {
		end   int
		nodes []string
		cpus  int
	}{{-5, []string{"a"}, 1}, {10, []string{"a"}, 2}, {10, []string{"b"}, 4}, {10, []string{"a"}, 8}, {30, []string{"a", "b"}, 16}, {45, []string{"b"}, 32}} {
		run := Running{ID: uint64(i + 1), End: now.Add(time.Duration(r.end) * time.Second)}
		for _, n := range r.nodes {
			run.Alloc = append(run.Alloc, Allocation{Node: n, Resources: cpus(r.cpus)})
		}
		s.Running = append(s.Running, run)
	}
	segs := func(s Snapshot) [][]segment {
		var out [][]segment
		for _, ns := range newProfile(s, nil).nodes {
			out = append(out, ns.tl.segments())
		}
		return out
	}
	want := segs(s)
	if len(want[0]) != 4 || len(want[1]) != 4 { // now, +1 ns (overdue), 10 s, 30 s on a; now, 10, 30, 45 s on b
		t.Fatalf("profile by end: %v", want)
	}
	rev := s
	rev.Running = slices.Clone(s.Running)
	slices.Reverse(rev.Running)
	if got := segs(rev); !reflect.DeepEqual(got, want) {
		t.Errorf("running jobs in reverse: %v, by end: %v", got, want)
	}
}

// TestLevelOfPicksTheLargestThresholdsNotAbove: the level's CPU and
// duration thresholds are the largest not above the job's, on and
// around every threshold.
func TestLevelOfPicksTheLargestThresholdsNotAbove(t *testing.T) {
	var durs []int64
	for _, d := range durLevels {
		durs = append(durs, d, d+1, max(d-1, 0))
	}
	durs = append(durs, never)
	for n := 1; n <= 300; n++ {
		for _, dur := range durs {
			l := levelOf(cpus(n), dur)
			c, d := l/numDur, l%numDur
			if cpuThresholds[c] > n || c+1 < cpuLevels && cpuThresholds[c+1] <= n {
				t.Fatalf("levelOf(%d CPUs) uses threshold %d", n, cpuThresholds[c])
			}
			if durLevels[d] > dur || d+1 < numDur && durLevels[d+1] <= dur {
				t.Fatalf("levelOf(%d ns) uses duration level %d", dur, durLevels[d])
			}
		}
	}
}
