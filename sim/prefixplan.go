package sim

import (
	"math"
	"math/bits"
	"time"

	"github.com/corral-hpc/corral/sched"
)

// A conservative plan that reports starts only stops once no job left
// could start now; on RICC's deep queues, before half the queue on
// average; an EASY plan in priority order starts nothing behind the last
// job it starts unless that job fits what the plan left. Yet the planner
// reads every job to admit it, at every event.
// So where the plan gives a sched.Headroom, the replay hands the planner
// only the first cut jobs of its queue, and checks the jobs behind them
// against the headroom of that plan:
//
//   - the plan of the prefix places the same jobs on the same profile as
//     the plan of the whole queue, up to where the prefix's plan stops;
//   - there the whole queue's plan goes on only if some job left could
//     start now: none of the prefix's can (its own test said so), and a
//     job behind the cut can only if it fits the headroom;
//   - so when no job behind the cut fits it, both plans start the same
//     jobs and leave the same headroom. Otherwise the whole queue is
//     planned again.
//
// The check is a few comparisons per run-time bucket (the fewest
// processors a job behind the cut needs, for the shortest run time the
// bucket holds), and only when one of them passes, a pass over the jobs.
// The cut is half again the jobs the last plan came to
// (sched.Headroom.Reached). None of this changes what a replay starts:
// docs/benchmarks.md compares the output byte for byte.
type prefixPlan struct {
	cut int  // jobs handed to the planner; 0: the whole queue
	ok  bool // the policy's plans give a headroom
	// fewest[b]: the fewest processors of a job at pending[covered:] or
	// once there, whose limit is in bucket b (bits.Len64 of its seconds);
	// MaxInt: none. Jobs that left only make the test looser.
	fewest  [65]int
	covered int
}

// Prefix cuts: the least, and the margin over the last plan's depth
// (1/cutMargin of it).
const (
	leastCut  = 256
	cutMargin = 2
)

func (pp *prefixPlan) reset() {
	for b := range pp.fewest {
		pp.fewest[b] = math.MaxInt
	}
}

// add counts j among the jobs behind the cut (an arrival, queued at the
// end, is one).
func (pp *prefixPlan) add(j *simJob) {
	b := bits.Len64(uint64(max(j.Requested, 1)))
	pp.fewest[b] = min(pp.fewest[b], j.Procs)
}

// dropped records the jobs at idx (ascending) leaving the queue: those
// before covered move it down.
func (pp *prefixPlan) dropped(idx []int) {
	m := 0
	for m < len(idx) && idx[m] < pp.covered {
		m++
	}
	pp.covered -= m
}

// plan plans s, whose queue mirrors pending, as the whole queue's plan
// would. mayCut: the replay's queue is in priority order with no group
// limit, as a headroom needs.
func (r *replay) plan(s *sched.Snapshot, mayCut bool) sched.Plan {
	pp := &r.prefix
	k := pp.cut
	if !mayCut || r.pol.wholeQueue || !pp.ok || k >= len(s.Pending) {
		plan := r.pol.planner.Plan(*s)
		if mayCut && plan.Headroom != nil && !pp.ok {
			pp.ok, pp.covered = true, len(r.pending)
			pp.reset()
		}
		pp.learn(plan)
		return plan
	}
	cut := *s
	cut.Pending = s.Pending[:k]
	if plan := r.pol.planner.Plan(cut); plan.Headroom != nil && !r.behindCutFits(plan.Headroom, k) {
		pp.learn(plan)
		return plan
	}
	plan := r.pol.planner.Plan(*s)
	pp.learn(plan)
	return plan
}

// learn sets the next cut from how far this plan went, with a margin:
// the next plan's queue is this one's, a job or a few more or less.
func (pp *prefixPlan) learn(plan sched.Plan) {
	if plan.Headroom != nil {
		n := plan.Headroom.Reached()
		pp.cut = max(leastCut, n+n/cutMargin)
	}
}

// behindCutFits reports whether a job at pending[k:] fits the headroom
// now, first by the buckets, then, if one passes, job by job (rebuilding
// the buckets from the jobs behind the cut).
func (r *replay) behindCutFits(room *sched.Headroom, k int) bool {
	pp := &r.prefix
	for ; pp.covered > k; pp.covered-- {
		pp.add(r.pending[pp.covered-1])
	}
	maybe := false
	for b, p := range pp.fewest {
		if p != math.MaxInt && room.Fits(p, time.Duration(uint64(1)<<max(b-1, 0))*time.Second, 0) {
			maybe = true
			break
		}
	}
	if !maybe {
		return false
	}
	pp.reset()
	fits := false
	for _, j := range r.pending[k:] {
		pp.add(j)
		fits = fits || room.Fits(j.Procs, j.limit(), 0)
	}
	pp.covered = k
	return fits
}
