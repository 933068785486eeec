package ctld

import (
	"context"
	"time"
)

// housekeeping intervals.
const (
	housekeepTick     = 250 * time.Millisecond
	enforceLimitsTick = time.Second
)

// housekeep wakes the scheduler when a blocked job becomes eligible,
// enforces time limits lowered while jobs ran, cancels allocations their
// client abandoned, and purges finished jobs past retention.
func (s *Server) housekeep(ctx context.Context) {
	t := time.NewTicker(housekeepTick)
	defer t.Stop()
	s.purgeFinished(time.Now())
	lastPurge, lastEnforce, lastSweep := time.Now(), time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if w := s.pipe.wakeAt.Load(); w != 0 && now.UnixNano() >= w {
				s.pipe.wakeAt.CompareAndSwap(w, 0)
				s.Kick()
			}
			if now.Sub(lastEnforce) >= enforceLimitsTick {
				lastEnforce = now
				s.enforceTimeLimits(now)
				s.expireAllocations(now)
			}
			if now.Sub(lastSweep) >= stepSweepInterval {
				lastSweep = now
				stepSweep{s}.run(now)
			}
			if now.Sub(lastPurge) >= s.cfg.Pipeline.PurgeInterval {
				lastPurge = now
				s.purgeFinished(now)
			}
		}
	}
}
