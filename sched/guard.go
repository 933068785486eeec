package sched

import "github.com/corral-hpc/corral/api"

// planGuarded plans the guarded jobs (oldest first), each with a
// reservation that no later job can delay.
//
// With a window (GuardWindow) or GuardOverlap, only the oldest guarded
// job of each partition that does not start now is sure of a
// reservation. The others are deferred: with Pack, the set of them that
// fills the free CPUs best starts first (as LOS chooses among the head
// of its queue); then, oldest first, each starts now if it fits, else is
// reserved if it can start within the window, or with GuardOverlap
// before the oldest's reservation ends, else is guarded no longer in
// this plan (isGuarded cleared) and goes back among the jobs planned by
// priority, or beyond Depth where it came from. The oldest always holds
// its reservation, and each guarded job in turn becomes the oldest, so
// none waits without bound (EASY's guarantee, as GuardReserve 1 gives
// it), while the old jobs that can start now still start ahead of the
// backfill candidates.
func (b Backfill) planGuarded(p *profile, guarded []int, reqs []request, out []outcome, isGuarded []bool) {
	window := int64(never)
	if b.GuardWindow > 0 || b.GuardOverlap {
		window = max(int64(b.GuardWindow), 1)
	}
	deep := make(map[int]bool)              // beyond Depth: planned only if guarded
	oldestEnd := make(map[*partState]int64) // partitions whose oldest holds a reservation: its end
	var deferred []int
	for _, i := range guarded {
		r, o := &reqs[i], &out[i]
		deep[i] = o.reason == api.ReasonPriority
		o.reason = ""
		if _, ok := oldestEnd[r.part]; ok && window != never {
			deferred = append(deferred, i)
			continue
		}
		if !p.mayStart(r, o) {
			continue
		}
		if !startNow(p, r, o) {
			planOne(p, r, 0, o)
			oldestEnd[r.part] = satAdd(o.start, r.dur)
		}
		p.started(r, o)
	}
	if len(deferred) == 0 {
		return
	}
	if b.Pack > 0 {
		packStart(p, deferred, reqs, out, b.Pack, b.PackFill)
	}
	for _, i := range deferred {
		r, o := &reqs[i], &out[i]
		if o.planned || !p.mayStart(r, o) {
			continue
		}
		if startNow(p, r, o) {
			p.started(r, o)
			continue
		}
		limit := window
		if b.GuardOverlap {
			limit = max(limit, satAdd(oldestEnd[r.part], 1))
		}
		t, nodes := p.earliest(r, 0, limit)
		if t == never {
			isGuarded[i] = false
			if deep[i] {
				o.reason = api.ReasonPriority
			}
			continue
		}
		o.gpus = p.place(r, t, nodes)
		o.start, o.nodes, o.planned = t, nodes, true
	}
}
