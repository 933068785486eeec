package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// send sends one launch, within ctx and nodeCallTimeout. A launch larger
// than any node accepts is refused here, as the node would (the job's
// script and environment are too large), without costing the node
// anything.
func (l launchOrder) send(ctx context.Context) error {
	if b, err := json.Marshal(l.req); err == nil && len(b) > api.MaxLaunchBytes {
		return &api.StatusError{Code: http.StatusRequestEntityTooLarge, Kind: api.KindJobRefused,
			Message: fmt.Sprintf("its script, arguments and environment make a %d-byte launch request; nodes take at most %d", len(b), api.MaxLaunchBytes)}
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	return l.client.Do(ctx, http.MethodPost, "/v1/launch", l.req, nil)
}

// launchFailedLocked records a launch that failed. The node's answer
// says whose fault it was (api.KindJobRefused): a refusal for the job's
// own reasons (a --mount the node does not allow, a request the node
// cannot map) ends the job FAILED and leaves the node up, so no user's
// input can take a node out of service. Anything else (unreachable, 5xx,
// busy cores) is the node's: the job goes back to PENDING, held after
// lifecycle.MaxLaunchFailures in a row, and the node is DOWN for LaunchFailureHold.
func (s *Server) launchFailedLocked(j *job, l launchOrder, err error, now time.Time) {
	jobFault := api.JobRefused(err)
	ev := lifecycle.Event{Kind: lifecycle.LaunchFailed, Message: "launch on " + l.node + " failed: " + err.Error()}
	switch {
	case j.cancelRequested:
		ev = lifecycle.Event{Kind: lifecycle.Cancel, Message: "cancelled; launch on " + l.node + " failed: " + err.Error()}
	case jobFault:
		ev = lifecycle.Event{Kind: lifecycle.LaunchRefused, Message: "launch refused by node " + l.node + ": " + err.Error()}
	}
	next, lerr := step(j.rec, ev, now)
	msg := next.Job.Message
	if lerr != nil {
		s.log.Printf("job %d: launch on %s failed: %v; recording that: %v", l.id, l.node, err, lerr)
		return
	}
	if err := s.q.commit([]change{{j, next}}, nil); err != nil {
		s.log.Printf("job %d: %s; recording that failed: %v", l.id, msg, err)
		return
	}
	if jobFault {
		s.log.Printf("end job %d %s: %s (node %s stays up)", l.id, next.Job.State, msg, l.node)
	} else {
		s.nodes.markDown(l.node, "launch failed: "+err.Error(), now, s.cfg.LaunchFailureHold)
		s.log.Printf("job %d back to %s: %s; node %s down for %s", l.id, next.Job.State, msg, l.node, s.cfg.LaunchFailureHold)
	}
	s.Kick()
}
