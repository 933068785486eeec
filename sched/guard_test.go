package sched

import (
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// guardHarness: a 4-CPU node, 2 CPUs busy for an hour; job 1 has waited
// ten hours at the lowest priority, job 2 just arrived at the highest, and
// both need the whole node for an hour.
func guardHarness(t *testing.T) *Harness {
	return NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(4).Time(time.Hour).Prio(1).Submitted(T0.Add(-10*time.Hour)).Obj(),
			MakeJob(2).CPUs(4).Time(time.Hour).Prio(100).Submitted(T0).Obj(),
		)
}

// Without the guard, priority alone decides who is reserved first, so a
// stream of newer high-priority jobs could keep job 1 waiting forever;
// with it, the job waiting longest is reserved first in both modes.
func TestGuardReservesTheOldestJobFirst(t *testing.T) {
	for _, mode := range []Mode{Conservative, EASY} {
		t.Run(string(mode), func(t *testing.T) {
			plain := guardHarness(t).Plan(Backfill{Mode: mode})
			plain.MustWait(2, api.ReasonResources, time.Hour)
			guarded := guardHarness(t).Plan(Backfill{Mode: mode, GuardAfter: 5 * time.Hour})
			guarded.MustWait(1, api.ReasonPriority, time.Hour)
			guarded.MustWait(2, api.ReasonResources, 2*time.Hour)
		})
	}
}

// The guard looks past BackfillDepth: the oldest job is planned even when
// its priority puts it beyond the depth.
func TestGuardReachesBeyondDepth(t *testing.T) {
	v := guardHarness(t).Plan(Backfill{Mode: EASY, Depth: 1, GuardAfter: 5 * time.Hour})
	v.MustWait(1, api.ReasonPriority, time.Hour)
	v.MustWait(2, api.ReasonResources, 2*time.Hour)
}

// The guard counts from eligibility, not submission: job 1, submitted
// ten hours ago but released from a hold just now, is not guarded, and
// priority decides.
func TestGuardCountsFromEligibility(t *testing.T) {
	h := guardHarness(t)
	h.Snap.Pending[0].Eligible = T0.Add(-time.Minute)
	v := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour})
	v.MustWait(2, api.ReasonResources, time.Hour)
}

// Every job past GuardAfter is guarded, oldest first; younger ones are
// not, whatever their priority. Job 3 (six hours, highest priority) waits
// behind job 1 (ten hours); job 2 (new) behind both.
func TestGuardReservesEveryOldJobOldestFirst(t *testing.T) {
	h := guardHarness(t).Pending(MakeJob(3).CPUs(4).Time(time.Hour).Prio(200).Submitted(T0.Add(-6 * time.Hour)).Obj())
	v := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour})
	v.MustWait(1, api.ReasonPriority, time.Hour)
	v.MustWait(3, api.ReasonResources, 2*time.Hour)
	v.MustWait(2, api.ReasonPriority, 3*time.Hour)
	// With a guard beyond six hours, job 3 goes by priority, after job 1.
	w := h.Plan(Backfill{Mode: Conservative, GuardAfter: 7 * time.Hour})
	w.MustWait(1, api.ReasonPriority, time.Hour)
	w.MustWait(3, api.ReasonResources, 2*time.Hour)
	w.MustWait(2, api.ReasonPriority, 3*time.Hour)
}

// EASY's candidates are ordered by their expected run time when given
// (ShortestFirst), but every job is planned to its time limit: job 4,
// expected to take a minute but allowed two hours, is tried first and does
// not fit before job 1's reservation, so job 2 takes the two free CPUs;
// job 1's reservation stays at 1h.
func TestExpectedOrdersButNeverPlans(t *testing.T) {
	v := gapHarness(t,
		MakeJob(2).CPUs(2).Time(50*time.Minute).Prio(5).Obj(),
		MakeJob(3).CPUs(2).Time(40*time.Minute).Prio(4).Obj(),
		Pending{ID: 4, Partition: "batch", PerNode: Resources{CPUs: 2}, TimeLimit: 2 * time.Hour,
			Expected: time.Minute, Priority: 3, Submit: T0.Add(-time.Second)},
	).Plan(Backfill{Mode: EASY, Order: ShortestFirst})
	v.MustStart(3, "n1") // 40 min before job 2's 50: shortest expected among those that fit
	v.MustWait(1, api.ReasonResources, time.Hour)
	v.MustNotStart(4)
	v.MustNotStart(2)

	w := gapHarness(t,
		MakeJob(2).CPUs(2).Time(50*time.Minute).Prio(5).Obj(),
		Pending{ID: 3, Partition: "batch", PerNode: Resources{CPUs: 2}, TimeLimit: 40 * time.Minute,
			Expected: 45 * time.Minute, Priority: 4, Submit: T0.Add(-time.Second)},
		Pending{ID: 5, Partition: "batch", PerNode: Resources{CPUs: 2}, TimeLimit: 55 * time.Minute,
			Expected: time.Minute, Priority: 3, Submit: T0.Add(-time.Second)},
	).Plan(Backfill{Mode: EASY, Order: ShortestFirst})
	w.MustStart(5, "n1") // expected a minute: first, and its 55 min limit fits the hour
	w.MustWait(1, api.ReasonResources, time.Hour)
}

// LargestSlowdown tries first the job whose (wait + run time) / run time
// is largest: job 3, an hour long but waiting three hours (4), before job
// 2, ten minutes long and waiting twenty (3); priority alone would take
// job 2.
func TestLargestSlowdownFirst(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(2*time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(4).Time(time.Hour).Prio(30).Obj(),
			MakeJob(2).CPUs(2).Time(10*time.Minute).Prio(20).Submitted(T0.Add(-20*time.Minute)).Obj(),
			MakeJob(3).CPUs(2).Time(time.Hour).Prio(10).Submitted(T0.Add(-3*time.Hour)).Obj(),
		)
	h.Plan(Backfill{Mode: EASY}).MustStart(2, "n1")
	v := h.Plan(Backfill{Mode: EASY, Order: LargestSlowdown})
	v.MustStart(3, "n1")
	v.MustNotStart(2)
}

// EASY's guarantee, generalised: a guarded job's planned start never
// moves later when new jobs arrive, whatever their priority or size.
// Each random snapshot is planned, then planned again with a burst of
// new jobs at the highest priorities; every job holding a guard
// reservation must start at least as early as before (a start now
// stays a start now).
func TestPropertyGuardedStartNeverMovesLaterOnArrivals(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	checked := 0
	forEachRandomSnapshot(t, 60, []Mode{Conservative, EASY}, func(t *testing.T, s Snapshot, mode Mode) {
		for _, reserve := range []int{0, 2} {
			pl := guarded(mode)
			pl.GuardReserve = reserve
			before := pl.Plan(s)
			later := s
			later.Pending = slices.Clone(s.Pending)
			for k := range 1 + rng.Intn(6) {
				j := MakeJob(uint64(1000 + k)).CPUs(1 + rng.Intn(16)).Nodes(1 + rng.Intn(3)).
					Time(time.Duration(1+rng.Intn(600)) * time.Minute).Prio(int64(5 + rng.Intn(100))).Submitted(T0)
				if rng.Intn(3) == 0 {
					j.Part("half")
				}
				later.Pending = append(later.Pending, j.Obj())
			}
			after := pl.Plan(later)
			was, now := startsOf(before), startsOf(after)
			for _, id := range guardReserved(s, before, pl) {
				w, ok := was[id]
				if !ok {
					continue // no planned start to keep
				}
				checked++
				if n, ok := now[id]; !ok || n.After(w) {
					t.Fatalf("GuardReserve %d: guarded job %d was planned at %v, after arrivals at %v (ok %v)",
						reserve, id, w.Sub(T0), n.Sub(T0), ok)
				}
			}
		}
	})
	if checked < 100 {
		t.Fatalf("only %d guarded starts compared: the snapshots no longer exercise the guard", checked)
	}
}

// startsOf maps every job with a planned start to it: T0 for a start now.
func startsOf(p Plan) map[uint64]time.Time {
	out := map[uint64]time.Time{}
	for _, st := range p.Starts {
		out[st.JobID] = T0
	}
	for _, e := range p.Pending {
		if !e.Start.IsZero() {
			out[e.JobID] = e.Start
		}
	}
	return out
}

// guardReserved lists the jobs pl guards in s, worked out independently
// of the planner: the jobs eligible for at least GuardAfter that the plan
// did not refuse outright, oldest first (ties in priority order), the
// first GuardReserve of each partition (all when 0).
func guardReserved(s Snapshot, p Plan, pl Backfill) []uint64 {
	refused := map[uint64]bool{}
	for _, e := range p.Pending {
		switch e.Reason {
		case api.ReasonResources, api.ReasonPriority:
		default:
			refused[e.JobID] = true
		}
	}
	var old []Pending
	for _, j := range SortByPriority(s.Pending) {
		if !refused[j.ID] && !j.Submit.After(s.Now.Add(-pl.GuardAfter)) {
			old = append(old, j)
		}
	}
	slices.SortStableFunc(old, func(a, b Pending) int { return a.Submit.Compare(b.Submit) })
	per := map[string]int{}
	var out []uint64
	for _, j := range old {
		if per[j.Partition]++; pl.GuardReserve == 0 || per[j.Partition] <= pl.GuardReserve {
			out = append(out, j.ID)
		}
	}
	return out
}

// GuardReserve caps the guard's reservations to the oldest jobs of a
// partition: with 1, job 1 (ten hours) is still reserved first, but job 3
// (six hours, low priority) is no longer guarded and goes after job 2
// (new, high priority); with 0 both old jobs are.
func TestGuardReserveCapsTheGuardedJobs(t *testing.T) {
	h := guardHarness(t).Pending(MakeJob(3).CPUs(4).Time(time.Hour).Prio(50).Submitted(T0.Add(-6 * time.Hour)).Obj())
	all := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour})
	all.MustWait(1, api.ReasonPriority, time.Hour)
	all.MustWait(3, api.ReasonPriority, 2*time.Hour)
	all.MustWait(2, api.ReasonResources, 3*time.Hour)
	one := h.Plan(Backfill{Mode: EASY, GuardAfter: 5 * time.Hour, GuardReserve: 1})
	one.MustWait(1, api.ReasonPriority, time.Hour)
	one.MustWait(2, api.ReasonResources, 2*time.Hour)
	one.MustWait(3, api.ReasonPriority, 3*time.Hour)
}

// When the top job is guarded and starts now, EASY's reservation goes to
// the next job, as it would have without the guard: job 1 (guarded, top)
// starts on two of the four free CPUs, job 2 (the whole node) is reserved
// at 1h, and job 3, which fits now but would hold two CPUs past 1h, must
// not start.
func TestGuardedTopJobStartingPassesTheReservationOn(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(6).Obj()).
		Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
		Pending(
			MakeJob(1).CPUs(2).Time(time.Hour).Prio(100).Submitted(T0.Add(-10*time.Hour)).Obj(),
			MakeJob(2).CPUs(6).Time(time.Hour).Prio(50).Submitted(T0).Obj(),
			MakeJob(3).CPUs(2).Time(3*time.Hour).Prio(1).Submitted(T0).Obj(),
		)
	for _, b := range []Backfill{{Mode: EASY}, {Mode: EASY, GuardAfter: 5 * time.Hour}} {
		v := h.Plan(b)
		v.MustStart(1, "n1")
		v.MustNotStart(3)
		v.MustWait(2, api.ReasonResources, time.Hour)
	}
}

// ReserveOldest gives EASY's reservations to the jobs of a partition
// that have waited longest instead of to the top job by priority: job 1
// (ten hours, lowest priority) and then job 3 (five hours) hold them, and
// job 2 (just arrived, highest priority) waits behind both. With one,
// only job 1 is reserved, and the estimates of the others follow priority.
func TestReserveOldestReservesTheLongestWaiting(t *testing.T) {
	h := guardHarness(t).Pending(MakeJob(3).CPUs(4).Time(time.Hour).Prio(50).Submitted(T0.Add(-5 * time.Hour)).Obj())
	plain := h.Plan(Backfill{Mode: EASY})
	plain.MustWait(2, api.ReasonResources, time.Hour)
	two := h.Plan(Backfill{Mode: EASY, ReserveOldest: 2})
	two.MustWait(1, api.ReasonPriority, time.Hour)
	two.MustWait(3, api.ReasonPriority, 2*time.Hour)
	two.MustWait(2, api.ReasonResources, 3*time.Hour)
	one := h.Plan(Backfill{Mode: EASY, ReserveOldest: 1})
	one.MustWait(1, api.ReasonPriority, time.Hour)
	one.MustWait(2, api.ReasonResources, 2*time.Hour)
	one.MustWait(3, api.ReasonPriority, 3*time.Hour)
}

// A job that fits now starts whatever the oldest hold: the reservations
// are kept, not made into a queue.
func TestReserveOldestStillBackfills(t *testing.T) {
	h := guardHarness(t).Pending(MakeJob(4).CPUs(2).Time(30 * time.Minute).Prio(1).Submitted(T0).Obj())
	v := h.Plan(Backfill{Mode: EASY, ReserveOldest: 2, Order: RankedWFP})
	v.MustStart(4, "n1")
	v.MustWait(1, api.ReasonPriority, time.Hour)
	v.MustWait(2, api.ReasonResources, 2*time.Hour)
}

// TestOldestMatchesSortingTheQueueByAge: the ReserveOldest jobs of each
// partition, picked as the queue is walked, are those of sorting it by
// eligibility (ties in priority order) and taking each partition's first.
func TestOldestMatchesSortingTheQueueByAge(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	parts := []*partState{{}, {}, {}}
	for round := range 500 {
		n := rng.Intn(40)
		reqs := make([]request, n)
		jobs := make([]int, n)
		for i := range reqs {
			// few distinct times, so that ties are common
			reqs[i] = request{Pending: &Pending{Submit: T0.Add(-time.Duration(rng.Intn(6)) * time.Hour)},
				part: parts[rng.Intn(len(parts))]}
			if rng.Intn(4) == 0 {
				reqs[i].Eligible = reqs[i].Submit.Add(time.Duration(rng.Intn(3)) * time.Hour)
			}
			jobs[i] = i
		}
		rng.Shuffle(n, func(a, b int) { jobs[a], jobs[b] = jobs[b], jobs[a] })
		b := Backfill{ReserveOldest: rng.Intn(4), ReserveOldestAfter: time.Duration(rng.Intn(3)) * time.Hour}

		byAge := slices.Clone(jobs)
		slices.SortStableFunc(byAge, func(x, y int) int { return reqs[x].eligible().Compare(reqs[y].eligible()) })
		var want []int
		count := map[*partState]int{}
		for _, i := range byAge {
			if count[reqs[i].part] < b.ReserveOldest && !reqs[i].eligible().Add(b.ReserveOldestAfter).After(T0) {
				count[reqs[i].part]++
				want = append(want, i)
			}
		}
		if got := b.oldest(jobs, reqs, T0); !slices.Equal(got, want) {
			t.Fatalf("round %d (oldest %d after %s): got %v, want %v", round, b.ReserveOldest, b.ReserveOldestAfter, got, want)
		}
	}
}
