package sched

import "github.com/corral-hpc/corral/api"

// planGuarded plans the guarded jobs (oldest first), each with a
// reservation that no later job can delay.
//
// With a window (GuardWindow), only the oldest guarded job of each
// partition that does not start now is sure of a reservation; the others
// are deferred, then started now if they fit (by set, with Pack, as
// LOS chooses among the head of its queue, else oldest first), else
// reserved if they can start within the window, else guarded no longer
// in this plan (isGuarded cleared): they go back among the jobs planned
// by priority, or beyond Depth where they came from. The oldest always
// holds its reservation, and each guarded job in turn becomes the
// oldest, so none waits without bound (EASY's guarantee, as GuardReserve
// 1 gives it), while the ones that can start soon still start in age
// order, ahead of the backfill candidates.
func (b Backfill) planGuarded(p *profile, guarded []int, reqs []request, out []outcome, isGuarded []bool) {
	window := int64(never)
	if b.GuardWindow > 0 {
		window = int64(b.GuardWindow)
	}
	deep := make(map[int]bool)            // beyond Depth: planned only if guarded
	reserved := make(map[*partState]bool) // partitions whose oldest holds a reservation
	var deferred []int
	for _, i := range guarded {
		r, o := &reqs[i], &out[i]
		deep[i] = o.reason == api.ReasonPriority
		o.reason = ""
		if window != never && reserved[r.part] {
			deferred = append(deferred, i)
			continue
		}
		if !p.mayStart(r, o) {
			continue
		}
		if !startNow(p, r, o) {
			planOne(p, r, 0, o)
			reserved[r.part] = true
		}
		p.started(r, o)
	}
	if len(deferred) == 0 {
		return
	}
	if b.Pack > 0 {
		packStart(p, deferred, reqs, out, b.Pack)
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
		t, nodes := p.earliest(r, 0, window)
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
