package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// maxLaunchFailures is how many launches in a row may fail for node
// faults before the job is held (JobHeldAdmin, as Slurm's "launch failed
// requeued held"): each failure holds a node DOWN for LaunchFailureHold,
// so one job must not bounce from node to node forever.
const maxLaunchFailures = 3

// sendLaunch sends one launch. A launch larger than any node accepts is
// refused here, as the node would (the job's script and environment are
// too large), without costing the node anything.
func (s *Server) sendLaunch(l launchOrder) error {
	if b, err := json.Marshal(l.req); err == nil && len(b) > api.MaxLaunchBytes {
		return &api.StatusError{Code: http.StatusRequestEntityTooLarge, Kind: api.KindJobRefused,
			Message: fmt.Sprintf("its script, arguments and environment make a %d-byte launch request; nodes take at most %d", len(b), api.MaxLaunchBytes)}
	}
	ctx, cancel := context.WithTimeout(s.bgCtx, nodeCallTimeout)
	defer cancel()
	return l.client.Do(ctx, http.MethodPost, "/v1/launch", l.req, nil)
}

// launchFailedLocked records a launch that failed. The node's answer
// says whose fault it was (api.KindJobRefused): a refusal for the job's
// own reasons (a --mount the node does not allow, a request the node
// cannot map) ends the job FAILED and leaves the node up, so no user's
// input can take a node out of service. Anything else (unreachable, 5xx,
// busy cores) is the node's: the job goes back to PENDING, held after
// maxLaunchFailures in a row, and the node is DOWN for LaunchFailureHold.
func (s *Server) launchFailedLocked(j *job, l launchOrder, err error, now time.Time) {
	jobFault := api.JobRefused(err)
	var next store.JobRecord
	var msg string
	switch {
	case j.cancelRequested:
		msg = "cancelled; launch on " + l.node + " failed: " + err.Error()
		next = ended(j.rec, api.StateCancelled, now, nil, msg)
	case jobFault:
		msg = "launch refused by node " + l.node + ": " + err.Error()
		next = j.rec
		next.Job = endedJob(j.rec.Job, api.StateFailed, api.ReasonLaunchFailed, now, msg)
	default:
		msg = "launch on " + l.node + " failed: " + err.Error()
		next = transition(j.rec, api.StatePending, api.ReasonLaunchFailed, now)
		next.Job.StartTime, next.Job.Nodes, next.Job.GPUAlloc = nil, nil, nil
		if n := launchFailures(&next.Job); n >= maxLaunchFailures {
			msg = fmt.Sprintf("%s; held after %d failed launches in a row (an operator may release it)", msg, n)
			next = transition(next, api.StatePending, api.ReasonJobHeldAdmin, now)
			next.Job.Hold = holdAdmin
		}
		next.Job.Message = msg
	}
	if err := s.commitLocked([]change{{j, next}}); err != nil {
		s.log.Printf("job %d: %s; recording that failed: %v", l.id, msg, err)
		return
	}
	if jobFault {
		s.log.Printf("end job %d %s: %s (node %s stays up)", l.id, next.Job.State, msg, l.node)
	} else {
		s.markDownLocked(l.node, "launch failed: "+err.Error(), now)
		s.log.Printf("job %d back to %s: %s; node %s down for %s", l.id, next.Job.State, msg, l.node, s.cfg.LaunchFailureHold)
	}
	s.Kick()
}

// launchFailures counts the job's launches that failed in a row, from
// its history: since its submit, requeue or release, every return to
// PENDING was a failed launch. Kept in the history, the count survives
// controller restarts.
func launchFailures(job *api.Job) int {
	n := 0
	for i := len(job.History) - 1; i >= 0; i-- {
		switch h := job.History[i]; {
		case h.State == api.StateRunning:
		case h.State == api.StatePending && h.Reason == api.ReasonLaunchFailed:
			n++
		default:
			return n
		}
	}
	return n
}
