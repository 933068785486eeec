package ctld

import (
	"context"
	"time"
)

// The scheduling loop: when a cycle runs, and one cycle from snapshot to
// plan to its application.

// restFactor, restBurst and maxRest pace cycles (cyclePacer): planning
// may take about 1/(1+restFactor) of a core over time, bursts of up to
// restBurst of owed rest run without waiting, and no rest is longer than
// maxRest.
//
// periodicFactor: timer cycles (nothing happened, time moved on) come at
// most every periodicFactor*d, so a huge idle queue (100,000 jobs plan in
// about 0.4 s) costs a few percent of a core instead of most of one;
// events are still served after the short rest.
const (
	restFactor     = 2
	restBurst      = 250 * time.Millisecond
	maxRest        = 250 * time.Millisecond
	periodicFactor = 20
)

// Kick asks for a scheduling cycle soon. Kicks coalesce: many events
// while a cycle runs cause one more cycle, not many.
func (s *Server) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// scheduleLoop runs cycles on kicks and on the timer, paced by
// cyclePacer: a flood of submits against a long queue cannot keep more
// than about a third of a core planning, and an event after a quiet
// spell (a job's end freeing cores) is served at once.
func (s *Server) scheduleLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.SchedInterval)
	defer t.Stop()
	var pace cyclePacer
	var last time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-t.C:
			if time.Since(pace.lastEnd) < periodicFactor*last {
				continue
			}
		}
		if rest := pace.wait(time.Now()); rest > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rest):
			}
		}
		start := time.Now()
		s.scheduleOnce(start)
		end := time.Now()
		pace.ran(start, end)
		last = end.Sub(start)
		s.metrics.observeCycle(last)
	}
}

// scheduleOnce is one cycle: snapshot under the read lock, plan without
// any lock (planning a long queue must not stall submits), apply under the
// write lock re-checking everything the world may have changed meanwhile,
// then send launches.
func (s *Server) scheduleOnce(now time.Time) {
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	for _, l := range s.cycleLocked(now) {
		s.bg.Add(1)
		go s.launch(l)
	}
}

// cycleLocked is a cycle's decisions, committed, with the launches still
// to send. The caller holds cycleMu and neither lock of s.mu.
func (s *Server) cycleLocked(now time.Time) []launchOrder {
	s.mu.RLock()
	s.snapshots.prepare(now)
	snap, notes := s.snapshots.build(now, nil)
	s.mu.RUnlock()
	plan := s.planner.Plan(snap)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(snap, notes, plan, time.Now())
}
