package sim

import (
	"time"

	"github.com/corral-hpc/corral/sched"
)

// recordGuard is the ablation choice record: a guard whose wait is the
// longest wait of any job started so far in the replay (at least the
// inner planner's ReserveOldestAfter), so that a job about to wait longer
// than any before it is reserved for, with no constant to tune. It is a
// measuring device, not a policy: the controller's planner sees no
// history of waits.
type recordGuard struct {
	inner  sched.Backfill
	record time.Duration
}

var _ sched.Planner = (*recordGuard)(nil)

func (g *recordGuard) Plan(s sched.Snapshot) sched.Plan {
	b := g.inner
	b.GuardAfter = max(g.record, b.ReserveOldestAfter, time.Second)
	plan := b.Plan(s)
	if len(plan.Starts) == 0 {
		return plan
	}
	started := make(map[uint64]bool, len(plan.Starts))
	for _, st := range plan.Starts {
		started[st.JobID] = true
	}
	for i := range s.Pending {
		if p := &s.Pending[i]; started[p.ID] {
			from := p.Eligible
			if from.IsZero() {
				from = p.Submit
			}
			g.record = max(g.record, s.Now.Sub(from))
		}
	}
	return plan
}
