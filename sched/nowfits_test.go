package sched

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

func TestDurBucketFloorsBoundRunTimes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	ds := []int64{0, 1, 1<<30 - 1, 1 << 30, 8<<30 - 1, 8 << 30, int64(time.Hour), int64(7 * 24 * time.Hour), never - 1, never}
	for range 10000 {
		ds = append(ds, rng.Int63n(never>>uint(1+rng.Intn(62))))
	}
	for _, d := range ds {
		b := durBucket(d)
		if b < 0 || b >= durBuckets {
			t.Fatalf("durBucket(%d) = %d, outside [0, %d)", d, b, durBuckets)
		}
		if f := bucketFloor(b); f > d {
			t.Fatalf("bucketFloor(durBucket(%d)) = %d: above the run time", d, f)
		}
		if b+1 < durBuckets && bucketFloor(b+1) <= d {
			t.Fatalf("run time %d belongs above bucket %d (next floor %d)", d, b, bucketFloor(b+1))
		}
		if b >= 8 && b+1 < durBuckets && 4*bucketFloor(b+1) > 5*bucketFloor(b) {
			t.Fatalf("buckets %d and %d are more than a quarter apart", b, b+1)
		}
	}
}

// TestNowFitsAsksTheWholeWindow: one 8-CPU node with 4 CPUs busy for an
// hour, then 2 busy until the third hour.
func TestNowFitsAsksTheWholeWindow(t *testing.T) {
	s := Snapshot{Now: T0,
		Nodes:      []Node{MakeNode("n1").CPUs(8).Obj()},
		Partitions: []Partition{{Name: "batch", Nodes: []string{"n1"}}},
		Running: []Running{
			MakeRunning(1).On("n1", 2).Ends(time.Hour).Obj(),
			MakeRunning(2).On("n1", 2).Ends(3 * time.Hour).Obj(),
		}}
	for _, c := range []struct {
		cpus int
		dur  time.Duration
		want bool
	}{
		{4, 2 * time.Hour, true},        // 4 free from now on
		{5, 30 * time.Minute, false},    // 4 free in the first hour
		{6, 2 * time.Hour, false},       // the first hour again
		{4, 0, true},                    // the first segment counts even for no time
		{1, time.Duration(never), true}, // no limit: the whole profile
	} {
		t.Run(fmt.Sprintf("%dcpus/%s", c.cpus, c.dur), func(t *testing.T) {
			p := newProfile(s, nil)
			reqs := []request{{need: Resources{CPUs: 9}, dur: int64(time.Minute)}, {need: Resources{CPUs: c.cpus}, dur: int64(c.dur)}}
			f := newNowFits([]int{0, 1}, reqs, new(scratch))
			if got := f.any(p.nodes); got != c.want {
				t.Fatalf("any = %v, want %v", got, c.want)
			}
			f.remove(0) // the 9-CPU job, which never fits, leaves first
			if got := f.any(p.nodes); got != c.want {
				t.Fatalf("after the first job left: any = %v, want %v", got, c.want)
			}
			f.remove(1)
			if f.any(p.nodes) {
				t.Fatal("any = true with no job left")
			}
		})
	}
}

// TestConservativeStartsOnlyOnABusyNode replays the simulator's case,
// one large node with long queues of mixed widths and limits, where the
// plan stops once nothing left can start now: the starts must be the
// full plan's.
func TestConservativeStartsOnlyOnABusyNode(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	limits := []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 90 * time.Minute, 4 * time.Hour, 24 * time.Hour, 72 * time.Hour}
	for round := range 300 {
		cpus := 16 << rng.Intn(5)
		s := Snapshot{Now: T0,
			Nodes:      []Node{MakeNode("n1").CPUs(cpus).Obj()},
			Partitions: []Partition{{Name: "batch", Nodes: []string{"n1"}}}}
		for used, id := 0, uint64(1); used < cpus; id++ {
			c := min(1+rng.Intn(cpus/4), cpus-used-rng.Intn(2))
			if c < 1 {
				break
			}
			s.Running = append(s.Running, MakeRunning(id).On("n1", c).Ends(time.Duration(1+rng.Intn(600))*time.Minute).Obj())
			used += c
		}
		for id := uint64(1000); id < uint64(1000+20+rng.Intn(200)); id++ {
			j := MakeJob(id).CPUs(1 + rng.Intn(cpus/2)).Time(limits[rng.Intn(len(limits))])
			if rng.Intn(5) == 0 {
				j.CPUs(1 + rng.Intn(3))
			}
			s.Pending = append(s.Pending, j.Obj())
		}
		full := Backfill{Mode: Conservative}.Plan(s)
		only := Backfill{Mode: Conservative, StartsOnly: true}.Plan(s)
		if !reflect.DeepEqual(full.Starts, only.Starts) {
			t.Fatalf("round %d: starts differ:\nfull %+v\nonly %+v", round, full.Starts, only.Starts)
		}
	}
}

// TestNowFitsCountsARunTimeEndingWithASegment: a job whose run time ends
// exactly where the free CPUs drop fits before the drop.
func TestNowFitsCountsARunTimeEndingWithASegment(t *testing.T) {
	d := bucketFloor(40) // a run time that is its bucket's floor
	n := &nodeState{tl: newTimeline(Resources{CPUs: 6})}
	n.tl.appendSegment(d, Resources{CPUs: 0})
	f := newNowFits([]int{0}, []request{{need: Resources{CPUs: 6}, dur: d}}, new(scratch))
	if !f.any([]*nodeState{n}) {
		t.Fatal("a 6-CPU job ending as the 6 free CPUs are taken does not fit now")
	}
	f = newNowFits([]int{0}, []request{{need: Resources{CPUs: 6}, dur: bucketFloor(41)}}, new(scratch))
	if f.any([]*nodeState{n}) {
		t.Fatal("a job running a bucket into the full segment fits now")
	}
}

// headroomSnapshot: one 8-CPU node, 6 CPUs busy for 100 s; job 10 (8
// CPUs for 200 s) and job 11 (2 CPUs for an hour) wait.
func headroomSnapshot() Snapshot {
	return Snapshot{Now: T0,
		Nodes:      []Node{MakeNode("n1").CPUs(8).Obj()},
		Partitions: []Partition{{Name: "batch", Nodes: []string{"n1"}}},
		Running:    []Running{MakeRunning(1).On("n1", 6).Ends(100 * time.Second).Obj()},
		Pending: []Pending{
			MakeJob(10).CPUs(8).Time(200 * time.Second).Submitted(T0).Obj(),
			MakeJob(11).CPUs(2).Time(time.Hour).Submitted(T0.Add(time.Second)).Obj(),
		}}
}

// TestHeadroomIsWhatTheStoppedPlanLeft (headroomSnapshot): job 10 is
// reserved from 100 s to 300 s, and job 11 after it. A job queued behind
// them fits only in the 2 CPUs left before 100 s, and a later arrival has
// less of that window.
func TestHeadroomIsWhatTheStoppedPlanLeft(t *testing.T) {
	s := headroomSnapshot()
	plan := Backfill{Mode: Conservative, StartsOnly: true}.Plan(s)
	if len(plan.Starts) != 0 || plan.Headroom == nil {
		t.Fatalf("starts %v, headroom %v: want no start and a headroom", plan.Starts, plan.Headroom)
	}
	if n := plan.Headroom.Reached(); n != 1 {
		t.Fatalf("the plan reached %d jobs, want 1: job 11 cannot start now, so the plan stops before it", n)
	}
	for _, c := range []struct {
		cpus       int
		dur, since time.Duration
		want       bool
	}{
		{2, 100 * time.Second, 0, true},
		{3, time.Second, 0, false},       // 2 free now
		{2, 101 * time.Second, 0, false}, // job 10 takes all 8 at 100 s
		{2, 50 * time.Second, 40 * time.Second, true},
		{2, 50 * time.Second, 60 * time.Second, false}, // [60, 110) reaches job 10
		{1, 300 * time.Second, 0, false},
		{0, time.Hour, 0, true},
	} {
		if got := plan.Headroom.Fits(c.cpus, c.dur, c.since); got != c.want {
			t.Errorf("Fits(%d CPUs, %s, %s later) = %v, want %v", c.cpus, c.dur, c.since, got, c.want)
		}
	}
	for name, b := range map[string]Backfill{
		"full plan":            {Mode: Conservative},
		"easy, shortest first": {Mode: EASY, StartsOnly: true, Order: ShortestFirst},
		"guarded":              {Mode: Conservative, StartsOnly: true, ReserveOldest: 1},
	} {
		if h := b.Plan(s).Headroom; h != nil {
			t.Errorf("%s: headroom %v, want none", name, h)
		}
	}
}

// An EASY plan in priority order leaves the same headroom on
// headroomSnapshot as a conservative one: job 10
// holds the reservation, job 11 cannot start before it, and a job behind
// them fits only in the 2 CPUs before 100 s. With a second partition
// there is none: its top job could be any job of the queue.
func TestEASYHeadroomInPriorityOrder(t *testing.T) {
	s := headroomSnapshot()
	for _, order := range []Order{"", ByPriority} {
		plan := Backfill{Mode: EASY, StartsOnly: true, Order: order}.Plan(s)
		if len(plan.Starts) != 0 || plan.Headroom == nil || plan.Headroom.Reached() != 1 {
			t.Fatalf("order %q: starts %v, headroom %v: want no start and a headroom after job 10", order, plan.Starts, plan.Headroom)
		}
		if !plan.Headroom.Fits(2, 100*time.Second, 0) || plan.Headroom.Fits(2, 101*time.Second, 0) {
			t.Errorf("order %q: headroom %v, want 2 CPUs for 100 s and no longer", order, plan.Headroom)
		}
	}
	s.Partitions = append(s.Partitions, Partition{Name: "other", Nodes: []string{"n1"}})
	if h := (Backfill{Mode: EASY, StartsOnly: true}).Plan(s).Headroom; h != nil {
		t.Errorf("two partitions: headroom %v, want none", h)
	}
}

// TestNowFitsSkipsBlocksExactly: on profiles of many blocks, any's answer
// is the one a test of every segment gives: a job fits now if it needs
// at most the fewest CPUs free in the segments that begin before its run
// time's bucket floor (the first segment always counts). Each job's need
// is set around that fewest, so the answer turns on the exact minimum.
func TestNowFitsSkipsBlocksExactly(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	blocks := 0
	for round := 0; round < 500; round++ {
		n := &nodeState{capacity: cpus(64), tl: newTimeline(cpus(64))}
		for k := 0; k < 50+rng.Intn(300); k++ {
			need := cpus(1 + rng.Intn(8))
			dur := int64(1 + rng.Intn(1<<33))
			if at := n.tl.earliest(need, dur, int64(rng.Intn(1<<34)), never); at != never {
				n.tl.reserve(need, at, at+dur)
			}
		}
		blocks = max(blocks, len(n.tl.blocks))
		segs := n.tl.segments()
		fewestBefore := func(floor int64) int {
			fewest := math.MaxInt
			for i, s := range segs {
				if i > 0 && s.at >= floor {
					break
				}
				fewest = min(fewest, s.free.CPUs)
			}
			return fewest
		}
		var reqs []request
		var plannable []int
		want := false
		for k := 0; k < 1+rng.Intn(4); k++ {
			dur := int64(1 + rng.Intn(1<<35))
			need := max(1, fewestBefore(bucketFloor(durBucket(dur)))+rng.Intn(3)-1)
			reqs = append(reqs, request{need: cpus(need), dur: dur})
			plannable = append(plannable, k)
			want = want || need <= fewestBefore(bucketFloor(durBucket(dur)))
		}
		f := newNowFits(plannable, reqs, new(scratch))
		if got := f.any([]*nodeState{n}); got != want {
			t.Fatalf("round %d: any = %v, every segment says %v (%d blocks)", round, got, want, len(n.tl.blocks))
		}
	}
	if blocks < 4 {
		t.Fatalf("at most %d blocks: the test did not reach the block skips", blocks)
	}
}

// TestNowFitsForgetsAPassWhenItsWindowFills: a passed test is kept
// while reservations begin after its window and the jobs that leave
// leave as narrow a job behind; it is dropped when one begins inside the
// window.
func TestNowFitsForgetsAPassWhenItsWindowFills(t *testing.T) {
	hour := int64(time.Hour)
	n := &nodeState{tl: newTimeline(Resources{CPUs: 4})}
	nodes := []*nodeState{n}
	reqs := []request{{need: Resources{CPUs: 3}, dur: hour}, {need: Resources{CPUs: 3}, dur: hour}, {need: Resources{CPUs: 2}, dur: hour}}
	f := newNowFits([]int{0, 1, 2}, reqs, new(scratch))
	if !f.any(nodes) {
		t.Fatal("4 free CPUs: a 2-CPU job must fit")
	}
	f.remove(0)
	n.tl.reserve(reqs[0].need, 2*hour, 3*hour) // after the window: the pass stands
	f.placed(2*hour, nodes)
	if !f.any(nodes) {
		t.Fatal("a reservation after the window changed the answer")
	}
	f.remove(1)
	n.tl.reserve(reqs[1].need, 0, hour) // inside it: 1 CPU is left, the 2-CPU job does not fit
	f.placed(0, nodes)
	if f.any(nodes) {
		t.Fatal("the window is full, but the test still passes")
	}
}

// TestNowFitsForgetsAPassWhenItsJobLeaves: 3 CPUs free; the 2-CPU job
// passes, and once it is planned the 4-CPU job left does not.
func TestNowFitsForgetsAPassWhenItsJobLeaves(t *testing.T) {
	n := &nodeState{tl: newTimeline(Resources{CPUs: 3})}
	reqs := []request{{need: Resources{CPUs: 2}, dur: int64(time.Hour)}, {need: Resources{CPUs: 4}, dur: int64(time.Hour)}}
	f := newNowFits([]int{0, 1}, reqs, new(scratch))
	if !f.any([]*nodeState{n}) {
		t.Fatal("3 free CPUs: a 2-CPU job must fit")
	}
	f.remove(0)
	if f.any([]*nodeState{n}) {
		t.Fatal("only a 4-CPU job is left on 3 free CPUs, but the test passes")
	}
}
