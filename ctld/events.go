package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// applyEvents applies a batch of job events in one transaction. Delivery
// is at least once, so every event is idempotent: an end for a job that is
// not RUNNING on that node (already ended, requeued, unknown) is ignored.
func (s *Server) applyEvents(events []api.JobEvent) error {
	now := time.Now()
	s.mu.Lock()
	var changes []change
	var ignored []api.JobEvent
	endedNow := make(map[uint64]bool)
	var steps stepUpdates
	add := func(j *job, ev api.JobEvent, le lifecycle.Event) {
		next, err := step(j.rec, le, now)
		if err != nil { // not for a RUNNING job: a bug, and the node should not resend it
			s.log.Printf("%s event for job %d from node %s: %v", ev.Kind, ev.JobID, ev.Node, err)
			return
		}
		changes = append(changes, change{j, next})
	}
	for _, ev := range events {
		j := s.q.job(ev.JobID)
		if ev.Kind == api.EventStepEnded { // from any node of the step
			steps.report(j, ev, now)
			continue
		}
		if j != nil && j.state().Holds() && !endedNow[ev.JobID] && j.isExtern(ev.Node) {
			if ev.Kind == api.EventEnded { // an extern part ended without being asked to
				if msg, ok := externEnded(j, ev); ok {
					endedNow[ev.JobID] = true
					changes = s.appendFailed(changes, j, now, msg)
				} else {
					s.q.partEndedEarly(j, ev.Node, ev.Time) // at the time limit: nothing to wait for there
				}
			}
			continue
		}
		if j == nil || !j.state().Holds() || endedNow[ev.JobID] ||
			(ev.Node != "" && ev.Node != j.batchHost()) {
			if ev.Kind == api.EventEnded && (j == nil || !j.state().Terminal()) && !s.q.isStopping(ev.JobID, ev.Node) {
				ignored = append(ignored, ev)
			}
			continue
		}
		switch ev.Kind {
		case api.EventStarted:
			if j.launch.ackedAt.IsZero() {
				j.launch.ackedAt = now
			}
			if j.rec.Job.Reason == api.ReasonImagePull { // configuring is over
				add(j, ev, lifecycle.Event{Kind: lifecycle.Configured, At: ev.Time})
			}
		case api.EventConfiguring:
			if j.rec.Job.Reason != api.ReasonImagePull {
				add(j, ev, lifecycle.Event{Kind: lifecycle.Configuring, At: ev.Time})
			}
		case api.EventEnded:
			endedNow[ev.JobID] = true
			add(j, ev, nodeEndEvent(j, ev, now))
		default:
			ignored = append(ignored, ev)
		}
	}
	err := s.q.commit(changes, nil, steps.recs...)
	freed := err == nil && s.q.partsEnded(events) // completing.go
	s.mu.Unlock()
	if err != nil {
		return err
	}
	steps.logEnds(s.log)
	for _, ev := range ignored {
		s.log.Printf("ignored %s event for job %d from node %s: the job is not running there", ev.Kind, ev.JobID, ev.Node)
	}
	for _, c := range changes {
		job := &c.next.Job
		if job.State == api.StateRunning { // configuring began or ended
			s.log.Printf("job %d on %s: %s", job.ID, job.Nodes[0], map[api.Reason]string{
				api.ReasonImagePull: "pulling its image", api.ReasonNone: "script started"}[job.Reason])
			continue
		}
		if job.State == api.StatePending { // its run was being requeued
			s.log.Printf("requeue job %d: run %d ended %s, job pending again", job.ID, job.Restarts, job.Runs[len(job.Runs)-1].State)
			continue
		}
		s.log.Printf("end job %d %s exit=%d signal=%d on %s%s", job.ID, job.State, derefInt(job.ExitCode), job.Signal,
			job.Nodes[0], suffixIf(" ("+job.Message+")", job.Message != ""))
	}
	if len(changes) > 0 || freed {
		s.Kick()
	}
	return nil
}

// nodeEndEvent is the lifecycle event a node's end report is for j: the
// end of a run being requeued, a TIMEOUT when the controller stopped the
// run at a time limit lowered while it ran (the node saw a cancel), the
// released allocation's end as its client's command ended, else the end
// as the node reports it.
func nodeEndEvent(j *job, ev api.JobEvent, now time.Time) lifecycle.Event {
	kind := lifecycle.End
	job := &j.rec.Job
	switch {
	case j.alloc.released != nil && ev.State == api.StateCancelled: // stopped for its release
		return releasedEnd(*j.alloc.released, ev)
	case j.cancelRequested:
	case j.rec.RequeueRequested:
		kind = lifecycle.EndRequeue
	case j.rec.EnforceTimeLimit && ev.State == api.StateCancelled && job.StartTime != nil &&
		!eventTime(ev, now).Before(job.StartTime.Add(time.Duration(job.TimeLimit)*time.Second)):
		kind = lifecycle.Timeout
	}
	return lifecycle.NodeEnd(kind, ev)
}

// eventTime is when the node says an event happened, else now.
func eventTime(ev api.JobEvent, now time.Time) time.Time {
	if ev.Time.IsZero() {
		return now
	}
	return ev.Time
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func suffixIf(s string, cond bool) string {
	if cond {
		return s
	}
	return ""
}
