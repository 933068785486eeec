package sched

import (
	"math"
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
	tl.reserve(cpus(4), 20, 30)
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
	tl.reserve(cpus(4), 10, 20)
	if got := tl.segments(); len(got) != 3 || got[1] != (segment{10, cpus(0)}) || got[2].at != 30 {
		t.Fatalf("after filling the gap: %+v", got)
	}
	// An unlimited reservation changes the tail forever.
	tl.reserve(cpus(1), 40, never)
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
			minFree := n.tl.reserve(need, at, satAdd(at, dur))
			n.updateBounds(at, satAdd(at, dur), minFree, nil, nil)
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

// flatProfile is the plain model the blocked timeline must agree with:
// the free amount at every instant of [0, horizon) (the last value holds
// forever), as a slice indexed by time.
type flatProfile []Resources

func (f flatProfile) earliest(req Resources, dur, from, limit int64) int64 {
	for t := from; t < min(limit, int64(len(f))); t++ {
		end := int64(len(f))
		if dur != never {
			end = min(t+dur, end)
		}
		ok := true
		for u := t; u < end && ok; u++ {
			ok = req.Fits(f[u])
		}
		if ok && (dur != never || req.Fits(f[len(f)-1])) {
			return t
		}
	}
	return never
}

// TestTimelineBlocksMatchAFlatProfile: random reservations on a timeline
// long enough to split and merge blocks many times; after each, every
// segment, the fewest CPUs reserve reports, earliest starts and each
// block's bounds must be what a flat profile gives.
func TestTimelineBlocksMatchAFlatProfile(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const horizon = 400
	for round := 0; round < 40; round++ {
		// Some running jobs' releases, as newProfile appends them.
		var rel []int64
		for k := 0; k < rng.Intn(40); k++ {
			rel = append(rel, 1+int64(rng.Intn(horizon-1)))
		}
		slices.Sort(rel)
		rel = slices.Compact(rel)
		gives := make([]int, len(rel))
		busy := 0
		for i := range gives {
			gives[i] = 1 + rng.Intn(3)
			busy += gives[i]
		}
		capa := Resources{CPUs: busy + 8 + rng.Intn(40), MemBytes: 1 << 20}
		free := capa
		free.CPUs -= busy
		tl := newTimeline(free)
		for i, at := range rel {
			free.CPUs += gives[i]
			tl.appendSegment(at, free)
		}
		flat := make(flatProfile, horizon+1)
		for u := int64(0); u <= horizon; u++ {
			flat[u] = tl.freeAt(u)
		}
		for step := 0; step < 300; step++ {
			need := Resources{CPUs: 1 + rng.Intn(capa.CPUs/2+1), MemBytes: int64(rng.Intn(2)) << 10}
			dur := int64(1 + rng.Intn(120))
			if rng.Intn(30) == 0 {
				dur = never
			}
			from := int64(rng.Intn(horizon / 2))
			limit := int64(never)
			if rng.Intn(4) == 0 {
				limit = from + int64(rng.Intn(horizon))
			}
			want := flat.earliest(need, dur, from, limit)
			got := tl.earliest(need, dur, from, limit)
			if want >= horizon-1 && got >= horizon-1 { // past the model's horizon
				continue
			}
			if got != want {
				t.Fatalf("round %d step %d: earliest(%v, %d, %d, %d) = %d, flat %d\n%v", round, step, need, dur, from, limit, got, want, tl.segments())
			}
			if got == never || satAdd(got, dur) > horizon {
				continue
			}
			end := satAdd(got, dur)
			fewest := math.MaxInt
			for u := got; u < min(end, horizon+1); u++ {
				flat[u] = flat[u].Sub(need)
				fewest = min(fewest, flat[u].CPUs)
			}
			if end == never {
				fewest = min(fewest, flat[horizon].CPUs)
			}
			if minFree := tl.reserve(need, got, end); minFree != fewest {
				t.Fatalf("round %d step %d: reserve over [%d, %d) says %d CPUs left at the fewest, flat %d", round, step, got, end, minFree, fewest)
			}
			segs := tl.segments()
			for i, s := range segs {
				if i > 0 && (s.at <= segs[i-1].at || s.free == segs[i-1].free) {
					t.Fatalf("round %d step %d: segments %d and %d out of order or unmerged: %v", round, step, i-1, i, segs)
				}
				e := int64(horizon + 1)
				if i+1 < len(segs) {
					e = min(segs[i+1].at, e)
				}
				for u := s.at; u < e; u++ {
					if flat[u] != s.free {
						t.Fatalf("round %d step %d: at %d the timeline has %v free, flat %v", round, step, u, s.free, flat[u])
					}
				}
			}
			for b, blk := range tl.blocks {
				if tl.starts[b] != blk.at[0] || len(blk.at) > blockCap || len(blk.at) != len(blk.free) {
					t.Fatalf("round %d step %d: block %d malformed: start %d, %d segments", round, step, b, tl.starts[b], len(blk.at))
				}
				low, high := blk.bounds()
				if blk.low != low || !high.Fits(blk.high) {
					t.Fatalf("round %d step %d: block %d bounds low %v high %v, its amounts %v..%v", round, step, b, blk.low, blk.high, low, high)
				}
			}
		}
		if len(tl.blocks) < 3 {
			t.Fatalf("round %d: only %d blocks: the test did not exercise splits", round, len(tl.blocks))
		}
	}
}
