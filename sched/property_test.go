package sched

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// randomSnapshot builds a snapshot with mixed node sizes, two overlapping
// partitions, running jobs with known, overdue and unknown ends, and
// pending jobs with mixed sizes, node counts, limits and a few blocked.
// Nodes have no GPUs, a plain fGPU pool, or A100s (some in MIG mode) or
// H100s worth 1 or 2 fGPU each; GPU jobs of two users ask for fractions
// or whole GPUs, some of a type.
func randomSnapshot(rng *rand.Rand, nodes, running, pending int) Snapshot {
	s := Snapshot{Now: T0}
	var all, half []string
	for i := 0; i < nodes; i++ {
		n := MakeNode(fmt.Sprintf("n%03d", i)).
			CPUs([]int{2, 4, 8, 16}[rng.Intn(4)]).
			Mem(int64(1+rng.Intn(8)) * GiB)
		switch rng.Intn(5) {
		case 1:
			n.FGPU(400)
		case 2, 3:
			var devs []gpu.Device
			for k := 0; k < 1+rng.Intn(4); k++ {
				if rng.Intn(4) == 0 {
					devs = append(devs, mockH100(k))
				} else {
					devs = append(devs, mockA100(k, rng.Intn(3) == 0))
				}
			}
			n.GPUs(gpu.Hundredths(100*(1+rng.Intn(2))), devs...)
		}
		if rng.Intn(15) == 0 {
			n.Down()
		}
		s.Nodes = append(s.Nodes, n.Obj())
		all = append(all, n.n.Name)
		if i%2 == 0 {
			half = append(half, n.n.Name)
		}
	}
	s.Partitions = []Partition{
		{Name: "batch", Nodes: all, DefaultTime: 2 * time.Hour},
		{Name: "half", Nodes: half, DefaultTime: 30 * time.Minute, MaxTime: 8 * time.Hour},
	}
	free := map[string]Resources{}
	held := map[string][]gpu.Holding{}
	for _, n := range s.Nodes {
		free[n.Name] = n.Capacity
	}
	for i := 0; i < running; i++ {
		n := s.Nodes[rng.Intn(nodes)]
		f := free[n.Name]
		if f.CPUs < 1 {
			continue
		}
		res := Resources{CPUs: 1 + rng.Intn(f.CPUs), MemBytes: f.MemBytes / int64(1+rng.Intn(3))}
		uid := uint32(1000 + rng.Intn(2))
		var shares []gpu.Share
		if len(n.GPUs) == 0 {
			res.FGPU = f.FGPU / (1 + rng.Intn(2))
		} else if rng.Intn(3) != 0 {
			amount := gpu.Hundredths(25 * (1 + rng.Intn(8)))
			view := gpu.FreeOf(n.GPUs, held[n.Name], perGPUOf(n))
			if sh, ok := gpu.Pack(view, gpu.Request{Amount: amount, UID: uid}, perGPUOf(n)); ok {
				shares = sh
				res.FGPU = int(amount)
				for _, x := range sh {
					held[n.Name] = append(held[n.Name], gpu.Holding{UID: uid, Share: x})
				}
			}
		}
		free[n.Name] = f.Sub(res)
		r := Running{ID: uint64(10000 + i), UID: uid, Alloc: []Allocation{{Node: n.Name, Resources: res, GPUs: shares}}}
		switch rng.Intn(10) {
		case 0: // unknown end
		case 1:
			r.End = T0.Add(-time.Minute)
		default:
			r.End = T0.Add(time.Duration(1+rng.Intn(600)) * time.Minute)
		}
		s.Running = append(s.Running, r)
	}
	for i := 0; i < pending; i++ {
		j := MakeJob(uint64(i + 1)).
			CPUs(1 + rng.Intn(8)).
			Mem(int64(rng.Intn(3)) * GiB / 2).
			Nodes(1 + rng.Intn(3)*rng.Intn(2)).
			Prio(int64(rng.Intn(5))).
			Submitted(T0.Add(-time.Duration(rng.Intn(1000)) * time.Second))
		if rng.Intn(4) != 0 {
			j.Time(time.Duration(1+rng.Intn(300)) * time.Minute)
		}
		j.UID(uint32(1000 + rng.Intn(2)))
		switch rng.Intn(8) {
		case 0, 1:
			j.FGPU(25 * rng.Intn(9))
		case 2:
			j.WholeGPUs(1 + rng.Intn(2))
		case 3:
			j.FGPU(10 + rng.Intn(100)).GPUType([]string{"a100", "h100", "v100"}[rng.Intn(3)])
		}
		if rng.Intn(3) == 0 {
			j.Part("half")
		}
		if rng.Intn(20) == 0 {
			j.Blocked(api.ReasonJobHeld)
		}
		if rng.Intn(5) == 0 { // -w, -x or -C resolved: a random few nodes
			allowed := map[string]bool{}
			for _, name := range all {
				if rng.Intn(3) == 0 {
					allowed[name] = true
				}
			}
			j.Allowed(allowed)
		}
		s.Pending = append(s.Pending, j.Obj())
	}
	return s
}

func forEachRandomSnapshot(t *testing.T, rounds int, modes []Mode, f func(t *testing.T, s Snapshot, mode Mode)) {
	rng := rand.New(rand.NewSource(42))
	forEachSnapshot(t, rounds, modes, func() Snapshot {
		return randomSnapshot(rng, 3+rng.Intn(12), rng.Intn(30), 5+rng.Intn(60))
	}, f)
}

// forEachDeepSnapshot: one to three nodes and hundreds of pending jobs,
// so node profiles run to hundreds of segments (their timelines split
// and merge blocks), and with one node, alone in both partitions, its
// search bounds are caught up lazily.
func forEachDeepSnapshot(t *testing.T, rounds int, modes []Mode, f func(t *testing.T, s Snapshot, mode Mode)) {
	rng := rand.New(rand.NewSource(43))
	forEachSnapshot(t, rounds, modes, func() Snapshot {
		return randomSnapshot(rng, 1+rng.Intn(3), rng.Intn(30), 100+rng.Intn(300))
	}, f)
}

func forEachSnapshot(t *testing.T, rounds int, modes []Mode, next func() Snapshot, f func(t *testing.T, s Snapshot, mode Mode)) {
	for round := 0; round < rounds; round++ {
		s := next()
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%d/%s", round, mode), func(t *testing.T) { f(t, s, mode) })
		}
	}
}

// couldEverRun says whether enough up nodes could ever hold the job
// (capacity less what running jobs with no known end hold forever), so a
// missing estimate is justified only when it returns false.
func couldEverRun(s Snapshot, j Pending) bool {
	var part *Partition
	for i := range s.Partitions {
		if s.Partitions[i].Name == j.Partition {
			part = &s.Partitions[i]
		}
	}
	if part == nil {
		return false
	}
	up := map[string]Node{}
	used := map[string]Resources{}
	forever := map[string][]gpuHold{}
	for _, n := range s.Nodes {
		if n.Up {
			up[n.Name] = n
		}
	}
	for _, r := range s.Running {
		if r.End.IsZero() {
			for _, a := range r.Alloc {
				used[a.Node] = used[a.Node].Add(a.Resources)
				forever[a.Node] = append(forever[a.Node], gpuHold{from: s.Now, shares: a.GPUs, uid: r.UID})
			}
		}
	}
	fit := 0
	for _, name := range part.Nodes {
		n, ok := up[name]
		if !ok || !j.allows(name) {
			continue
		}
		need, capacity, ok := scalarNeed(n, j)
		u := used[name]
		if len(n.GPUs) > 0 {
			u.FGPU = 0
		}
		if !ok || !need.Fits(capacity.Sub(u)) {
			continue
		}
		if len(n.GPUs) > 0 && (j.PerNode.FGPU > 0 || j.GPUs > 0) && !deviceFitsOver(n, j, forever[name], s.Now, 0) {
			continue
		}
		fit++
	}
	return fit >= max(j.NodeCount, 1)
}

func TestPropertyNoOvercommitAndEveryJobPlanned(t *testing.T) {
	forEachRandomSnapshot(t, 60, allModes, func(t *testing.T, s Snapshot, mode Mode) {
		for _, pl := range []Backfill{{Mode: mode}, guarded(mode), packed(mode), fairGuarded(mode)} {
			everyJobPlanned(t, s, pl)
		}
	})
}

// guarded is mode with the default planner's order and a guard short
// enough to take some of the random snapshots' jobs.
func guarded(mode Mode) Backfill {
	return Backfill{Mode: mode, Order: SmallestArea, GuardAfter: time.Minute}
}

// packed is guarded with set selection, a guard window and overlap.
func packed(mode Mode) Backfill {
	pl := guarded(mode)
	pl.Pack, pl.GuardWindow, pl.GuardOverlap = 8, 10*time.Minute, true
	return pl
}

// fairGuarded guards from half the wait to each job's fair start, which
// takes the random snapshots' jobs whose fair start is near.
func fairGuarded(mode Mode) Backfill {
	return Backfill{Mode: mode, Order: SmallestArea, GuardFairStart: 0.5}
}

func everyJobPlanned(t *testing.T, s Snapshot, pl Backfill) {
	h := &Harness{t: t, Snap: s}
	v := h.Plan(pl) // checks overcommit
	seen := map[uint64]bool{}
	for _, st := range v.Starts {
		seen[st.JobID] = true
	}
	for _, e := range v.Pending {
		if seen[e.JobID] {
			t.Fatalf("job %d both starts and waits", e.JobID)
		}
		seen[e.JobID] = true
	}
	if len(seen) != len(s.Pending) {
		t.Fatalf("plan covers %d jobs of %d", len(seen), len(s.Pending))
	}
	for _, j := range s.Pending {
		if j.Blocked != "" || !seen[j.ID] {
			continue
		}
		for _, e := range v.Pending {
			if e.JobID != j.ID {
				continue
			}
			if e.Reason == api.ReasonPartitionTimeLimit {
				break
			}
			if e.Start.IsZero() && couldEverRun(s, j) {
				// Only unlimited jobs may be shut out forever, by other
				// unlimited reservations.
				if plannedDuration(s, j) != 0 {
					t.Fatalf("job %d (%+v) got no start time; plan %s", j.ID, j, v)
				}
			}
		}
	}
}

func TestPropertyDeterministic(t *testing.T) {
	forEachRandomSnapshot(t, 30, allModes, func(t *testing.T, s Snapshot, mode Mode) {
		for _, pl := range []Backfill{{Mode: mode}, guarded(mode), packed(mode), fairGuarded(mode)} {
			a := pl.Plan(s)
			// The same input again, with the pending list in another order.
			s2 := s
			s2.Pending = append([]Pending(nil), s.Pending...)
			rand.New(rand.NewSource(7)).Shuffle(len(s2.Pending), func(i, j int) {
				s2.Pending[i], s2.Pending[j] = s2.Pending[j], s2.Pending[i]
			})
			for i := 0; i < 2; i++ {
				if b := pl.Plan(s2); !reflect.DeepEqual(a, b) {
					t.Fatalf("plans differ for identical input (%+v):\n%+v\n%+v", pl, a, b)
				}
			}
		}
	})
}

// A job that starts now while a higher-priority job waits was backfilled.
// Planning again without it must leave every protected job's start and
// nodes unchanged: all higher-priority jobs in conservative mode, the top
// (Resources) jobs in EASY.
func TestPropertyBackfillDelaysNoReservation(t *testing.T) {
	// fcfs never backfills, so it has nothing to check here.
	forEachRandomSnapshot(t, 40, []Mode{Conservative, EASY}, func(t *testing.T, s Snapshot, mode Mode) {
		for _, pl := range []Backfill{{Mode: mode}, {Mode: mode, Pack: 8}} {
			backfillDelaysNoReservation(t, s, mode, pl)
		}
	})
}

func backfillDelaysNoReservation(t *testing.T, s Snapshot, mode Mode, pl Backfill) {
	with := pl.Plan(s)
	order := SortByPriority(s.Pending)
	rank := map[uint64]int{}
	for i, j := range order {
		rank[j.ID] = i
	}
	started := map[uint64]bool{}
	for _, st := range with.Starts {
		started[st.JobID] = true
	}
	for _, st := range with.Starts {
		backfilled := false
		for _, e := range with.Pending {
			if rank[e.JobID] < rank[st.JobID] && e.Reason != api.ReasonJobHeld && !e.Start.IsZero() {
				backfilled = true
			}
		}
		if !backfilled {
			continue
		}
		s2 := s
		s2.Pending = nil
		for _, j := range s.Pending {
			if j.ID != st.JobID {
				s2.Pending = append(s2.Pending, j)
			}
		}
		without := pl.Plan(s2)
		wo := map[uint64]Estimate{}
		for _, e := range without.Pending {
			wo[e.JobID] = e
		}
		for _, e := range with.Pending {
			if rank[e.JobID] > rank[st.JobID] || e.Start.IsZero() {
				continue
			}
			if mode == EASY && e.Reason != api.ReasonResources {
				continue
			}
			o := wo[e.JobID]
			if !o.Start.Equal(e.Start) || !reflect.DeepEqual(o.Nodes, e.Nodes) {
				t.Fatalf("backfilling job %d moved job %d from %v%v to %v%v",
					st.JobID, e.JobID, o.Start.Sub(T0), o.Nodes, e.Start.Sub(T0), e.Nodes)
			}
		}
	}
}

// In conservative mode every estimate is the earliest start the profile
// allowed: replaying the plan job by job in priority order, a brute-force
// check of every earlier candidate time (now and every end of something
// already placed) finds no start the planner missed. This is what keeps
// the search index honest.
func TestPropertyConservativeStartsAreEarliest(t *testing.T) {
	forEachRandomSnapshot(t, 60, []Mode{Conservative}, func(t *testing.T, s Snapshot, _ Mode) {
		conservativeStartsAreEarliest(t, s)
	})
}

func conservativeStartsAreEarliest(t *testing.T, s Snapshot) {
	plan := Backfill{}.Plan(s)
	type iv struct {
		from, to time.Time // zero to = forever
		res      Resources
		gpus     gpuHold
	}
	held := map[string][]iv{}
	for _, r := range s.Running {
		end := r.End
		if !end.IsZero() && !end.After(s.Now) {
			end = s.Now.Add(1)
		}
		for _, a := range r.Alloc {
			held[a.Node] = append(held[a.Node], iv{s.Now, end, a.Resources, gpuHold{s.Now, end, a.GPUs, r.UID}})
		}
	}
	capOf, parts := map[string]Node{}, map[string]Partition{}
	for _, n := range s.Nodes {
		capOf[n.Name] = n
	}
	for _, p := range s.Partitions {
		parts[p.Name] = p
	}
	type placed struct {
		at    time.Time
		nodes []string
		gpus  [][]gpu.Share
	}
	planned := map[uint64]placed{}
	for _, st := range plan.Starts {
		planned[st.JobID] = placed{s.Now, st.Nodes, st.GPUs}
	}
	for _, e := range plan.Pending {
		if !e.Start.IsZero() {
			planned[e.JobID] = placed{e.Start, e.Nodes, e.GPUs}
		}
	}
	fitsOn := func(node string, j Pending, from time.Time, d time.Duration) bool {
		n := capOf[node]
		need, capacity, ok := scalarNeed(n, j)
		if !n.Up || !ok || !j.allows(node) {
			return false
		}
		if len(n.GPUs) > 0 && (j.PerNode.FGPU > 0 || j.GPUs > 0) {
			var hs []gpuHold
			for _, h := range held[node] {
				hs = append(hs, h.gpus)
			}
			if !deviceFitsOver(n, j, hs, from, d) {
				return false
			}
		}
		points := []time.Time{from}
		for _, h := range held[node] {
			if h.from.After(from) && (d == 0 || h.from.Before(from.Add(d))) {
				points = append(points, h.from)
			}
		}
		for _, p := range points {
			var used Resources
			for _, h := range held[node] {
				if !h.from.After(p) && (h.to.IsZero() || h.to.After(p)) {
					used = used.Add(h.res)
				}
			}
			if len(n.GPUs) > 0 {
				used.FGPU = 0 // the devices decide
			}
			if !need.Fits(capacity.Sub(used)) {
				return false
			}
		}
		return true
	}
	for _, j := range SortByPriority(s.Pending) {
		pl, ok := planned[j.ID]
		if !ok {
			continue
		}
		d := plannedDuration(s, j)
		cands := []time.Time{s.Now}
		for _, list := range held {
			for _, h := range list {
				if !h.to.IsZero() && h.to.Before(pl.at) {
					cands = append(cands, h.to)
				}
			}
		}
		for _, c := range cands {
			if !c.Before(pl.at) {
				continue
			}
			fit := 0
			for _, name := range parts[j.Partition].Nodes {
				if fitsOn(name, j, c, d) {
					fit++
				}
			}
			if fit >= max(j.NodeCount, 1) {
				t.Fatalf("job %d planned at %v but could start at %v on %d nodes", j.ID, pl.at.Sub(T0), c.Sub(T0), fit)
			}
		}
		var to time.Time
		if d != 0 {
			to = pl.at.Add(d)
		}
		for i, n := range pl.nodes {
			var shares []gpu.Share
			if pl.gpus != nil {
				shares = pl.gpus[i]
			}
			need, _, _ := scalarNeed(capOf[n], j)
			held[n] = append(held[n], iv{pl.at, to, need, gpuHold{pl.at, to, shares, j.UID}})
		}
	}
}

// TestPropertyDeepQueuesOnFewNodes runs the checks above on deep queues.
func TestPropertyDeepQueuesOnFewNodes(t *testing.T) {
	forEachDeepSnapshot(t, 12, allModes, func(t *testing.T, s Snapshot, mode Mode) {
		everyJobPlanned(t, s, Backfill{Mode: mode})
		b := Backfill{Mode: mode}
		full := b.Plan(s)
		b.StartsOnly = true
		if only := b.Plan(s); !reflect.DeepEqual(full.Starts, only.Starts) {
			t.Fatalf("%+v: StartsOnly starts differ:\n%+v\n%+v", b, full.Starts, only.Starts)
		}
		if mode == Conservative {
			conservativeStartsAreEarliest(t, s)
		}
	})
}

func TestSortPendingMatchesSortByPriority(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var jobs []Pending
	for i := 0; i < 500; i++ {
		// whole seconds, nanoseconds apart, and before 1970
		at := T0.Add(time.Duration(rng.Intn(5))*time.Second + time.Duration(rng.Intn(3)))
		if rng.Intn(5) == 0 {
			at = time.Unix(-int64(rng.Intn(3)), int64(rng.Intn(3)))
		}
		jobs = append(jobs, MakeJob(uint64(rng.Intn(300))).Prio(int64(rng.Intn(4))).
			Submitted(at).CPUs(1+i).Obj())
	}
	sorted := SortByPriority(jobs)
	// Shuffled, already in order (the simulator's case), and in order
	// but for the last two.
	late := slices.Clone(sorted)
	late[len(late)-1], late[len(late)-2] = late[len(late)-2], late[len(late)-1]
	for _, in := range [][]Pending{jobs, slices.Clone(sorted), late} {
		for i, p := range sortPending(in) {
			if !reflect.DeepEqual(*p, sorted[i]) {
				t.Fatalf("sortPending and SortByPriority disagree at %d", i)
			}
		}
	}
	// Equal priorities, newest first: not in order.
	newest := []Pending{MakeJob(1).Submitted(T0.Add(2)).Obj(), MakeJob(2).Submitted(T0.Add(1)).Obj(), MakeJob(3).Obj()}
	if got := sortPending(newest); got[0].ID != 3 || got[2].ID != 1 {
		t.Fatalf("newest first: order %d %d %d, want 3 2 1", got[0].ID, got[1].ID, got[2].ID)
	}
}

// StartsOnly plans start what full plans start, with the queue in order
// (the simulator's) or not: a conservative one admits its jobs only as
// it reaches them.
func TestPropertyStartsOnlyStartsTheSameJobs(t *testing.T) {
	forEachRandomSnapshot(t, 30, allModes, func(t *testing.T, s Snapshot, mode Mode) {
		shuffled := s
		shuffled.Pending = slices.Clone(s.Pending)
		rand.New(rand.NewSource(int64(len(s.Pending)))).Shuffle(len(shuffled.Pending), func(i, j int) {
			shuffled.Pending[i], shuffled.Pending[j] = shuffled.Pending[j], shuffled.Pending[i]
		})
		sorted := s
		sorted.Pending = SortByPriority(s.Pending)
		for _, b := range []Backfill{{Mode: mode}, {Mode: mode, Order: RankedWFP, ReserveOldest: 2}, {Mode: mode, Order: WFP},
			{Mode: mode, Order: ShortestFirst, Pack: 4}, {Mode: mode, Order: SmallestArea}} {
			full := b.Plan(s)
			b.StartsOnly = true
			for _, in := range []Snapshot{s, shuffled, sorted} {
				only := b.Plan(in)
				if !reflect.DeepEqual(full.Starts, only.Starts) || len(only.Pending) != 0 {
					t.Fatalf("%+v: starts differ or estimates returned:\n%+v\n%+v", b, full, only)
				}
			}
		}
	})
}
