package sched

import (
	"cmp"
	"slices"
	"time"
)

// FairStart is a job's fair start time (Sabin et al.): when it would
// start if jobs ran in the order they became eligible, each with a
// reservation no later job could delay (conservative backfilling in
// eligibility order), running jobs holding their resources until their
// time limits. The planner computes it once, in the first plan that sees
// the job eligible (Pending.FairStart zero), and returns it in
// Plan.FairStarts; the caller keeps it and passes it back with every
// later snapshot, so it stays what it was when the job's wait began.
type FairStart struct {
	JobID uint64
	At    time.Time
}

// UsesFairStarts reports whether the planner guards by fair starts, so
// that the caller must keep the ones its plans return.
func (b Backfill) UsesFairStarts() bool { return b.GuardFairStart > 0 && b.Mode != FCFS }

// fairStarts computes the fair start of every job among jobs (indexes
// into reqs of admitted jobs) that has none yet: one conservative pass
// over them in eligibility order, on a profile of its own, that stops
// after the last job without one. A job that fits nowhere on the up
// nodes gets none and is tried again next plan.
func fairStarts(s Snapshot, jobs []int, reqs []request) []FairStart {
	order := slices.Clone(jobs)
	slices.SortFunc(order, func(a, b int) int {
		x, y := &reqs[a], &reqs[b]
		if c := x.eligible().Compare(y.eligible()); c != 0 {
			return c
		}
		if c := x.Submit.Compare(y.Submit); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	last := -1
	for k, i := range order {
		if reqs[i].FairStart.IsZero() {
			last = k
		}
	}
	if last < 0 {
		return nil
	}
	p := newProfile(s, nil)
	var out []FairStart
	for _, i := range order[:last+1] {
		r := reqs[i] // the same job, planned on this pass's own profile
		r.part = p.parts[r.Partition]
		t, nodes := p.earliest(&r, 0, never)
		if t == never {
			continue
		}
		p.place(&r, t, nodes)
		if r.FairStart.IsZero() {
			out = append(out, FairStart{JobID: r.ID, At: s.Now.Add(time.Duration(t))})
		}
	}
	return out
}

// guardedAt is when the job is guarded: once it has waited GuardAfter,
// or GuardFairStart of the wait its fair start promised (at least
// GuardFairMin), whichever comes first; the zero time for never.
func (b Backfill) guardedAt(r *request, fair time.Time) time.Time {
	from := r.eligible()
	var at time.Time
	if b.GuardAfter > 0 {
		at = from.Add(b.GuardAfter)
	}
	if b.UsesFairStarts() && !fair.IsZero() {
		share := time.Duration(b.GuardFairStart * float64(max(fair.Sub(from), 0)))
		f := from.Add(max(share, b.GuardFairMin))
		if at.IsZero() || f.Before(at) {
			at = f
		}
	}
	return at
}

// guardedBy picks, among jobs (indexes in priority order), those guarded
// by now and the ReserveOldest oldest of each partition, oldest first;
// ties keep priority order. fair holds the fair
// starts this plan computed, for jobs whose snapshot had none.
func (b Backfill) guardedBy(jobs []int, reqs []request, now time.Time, fair map[uint64]time.Time) []int {
	if b.GuardAfter == 0 && !b.UsesFairStarts() {
		return b.oldest(jobs, reqs, now)
	}
	out := slices.Clone(jobs)
	slices.SortStableFunc(out, func(a, b int) int { return reqs[a].eligible().Compare(reqs[b].eligible()) })
	oldest := make(map[*partState]int) // the ReserveOldest jobs of each partition seen so far
	return slices.DeleteFunc(out, func(i int) bool {
		if oldest[reqs[i].part] < b.ReserveOldest && !reqs[i].eligible().Add(b.ReserveOldestAfter).After(now) {
			oldest[reqs[i].part]++
			return false
		}
		f := reqs[i].FairStart
		if f.IsZero() {
			f = fair[reqs[i].ID]
		}
		at := b.guardedAt(&reqs[i], f)
		return at.IsZero() || at.After(now)
	})
}

// oldest is guardedBy when only ReserveOldest guards: the ReserveOldest
// jobs of each partition eligible longest (at least ReserveOldestAfter),
// oldest first, ties in priority order. It keeps the few best of each
// partition as it goes instead of sorting the whole queue by age, which
// was a tenth of a replay of a long queue.
func (b Backfill) oldest(jobs []int, reqs []request, now time.Time) []int {
	if b.ReserveOldest <= 0 {
		return nil
	}
	type pick struct {
		eligible time.Time
		pos      int // in jobs: priority order
	}
	best := make(map[*partState][]pick)
	for pos, i := range jobs {
		r := &reqs[i]
		e := r.eligible()
		kept := best[r.part]
		if len(kept) == b.ReserveOldest && !e.Before(kept[len(kept)-1].eligible) {
			continue // not older than the youngest kept, and later in priority
		}
		if e.Add(b.ReserveOldestAfter).After(now) {
			continue
		}
		at := len(kept) // after every kept job as old or older
		for at > 0 && e.Before(kept[at-1].eligible) {
			at--
		}
		kept = slices.Insert(kept, at, pick{e, pos})
		best[r.part] = kept[:min(len(kept), b.ReserveOldest)]
	}
	var all []pick
	for _, kept := range best {
		all = append(all, kept...)
	}
	slices.SortFunc(all, func(x, y pick) int {
		if c := x.eligible.Compare(y.eligible); c != 0 {
			return c
		}
		return x.pos - y.pos
	})
	out := make([]int, len(all))
	for k, x := range all {
		out[k] = jobs[x.pos]
	}
	return out
}
