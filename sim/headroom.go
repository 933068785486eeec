package sim

import (
	"math"
	"time"
)

// arrivalsCannotStart reports whether a plan now would start nothing
// because only jobs have arrived since the last plan that gave a
// sched.Headroom (conservative, or EASY in priority order), and none fits
// what that plan left free: the older jobs' reservations are the same,
// and every newer job queues behind them. On
// an overloaded log a third of the plans follow arrivals alone, each
// reserving thousands of jobs again.
func (r *replay) arrivalsCannotStart(now int64) bool {
	if r.room == nil {
		return false
	}
	since := time.Duration(now-r.roomAt) * time.Second
	for _, j := range r.pending[r.roomed:] {
		if r.room.Fits(j.Procs, j.limit(), since) {
			return false
		}
	}
	r.roomed = len(r.pending)
	return true
}

// limit is the job's requested time as a plan holds it; unlimited when
// the trace gives none.
func (j *simJob) limit() time.Duration {
	if j.Requested <= 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(j.Requested) * time.Second
}
