package ctld

import (
	"context"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// Allocation jobs (salloc's, and srun's outside an allocation) run no
// script: every node holds the allocation and the client on the submit
// host starts steps in it. The client renews the allocation while it
// lives and releases it with its command's exit code; the job then ends
// COMPLETED or FAILED once its first node reports the stop, as Slurm's
// accounting shows salloc jobs. A client that stops renewing for
// Config.AllocIdleLimit (kill -9, a lost host) has its allocation
// cancelled: Slurm keeps such an allocation until its time limit unless
// InactiveLimit is set; corral bounds it unless corral.conf says
// InactiveLimit=0, since an abandoned interactive allocation holds nodes
// nobody uses. Clients are told to renew five times within the bound, so
// a few renewals may fail (a controller restart) before it is reached.
const defaultAllocIdleLimit = 15 * time.Second

// allocIdleLimit is the bound in force: the Config's (set), else the
// file's InactiveLimit (given; 0 is never, negative here), else the
// default.
func allocIdleLimit(cfg time.Duration, file *time.Duration) time.Duration {
	switch {
	case cfg != 0:
		return cfg
	case file != nil && *file == 0:
		return -1
	case file != nil:
		return *file
	}
	return defaultAllocIdleLimit
}

// renewEvery is how often clients renew under bound limit: five times
// within it, at least every second; with no bound, as under the default.
func renewEvery(limit time.Duration) int {
	if limit < 0 {
		limit = defaultAllocIdleLimit
	}
	return max(int(limit/5/time.Second), 1)
}

// releasedState is the state of an allocation released with code.
func releasedState(code int) api.JobState {
	if code == 0 {
		return api.StateCompleted
	}
	return api.StateFailed
}

// releasedEnd is the end of an allocation released with code, as its
// node's report of the stop ends it.
func releasedEnd(code int, ev api.JobEvent) lifecycle.Event {
	return lifecycle.Event{Kind: lifecycle.End, At: ev.Time, State: releasedState(code), ExitCode: code,
		PeakMemBytes: ev.PeakMemBytes, CPUTimeUsec: ev.CPUTimeUsec, Message: ev.Message}
}

// allocation renews allocation job id for its client, or releases it
// (req.Release): a pending one is cancelled at once, a running one's
// first node is told to stop (the answer does not wait for it) and its
// report ends the job. A renewal with WaitReadyMs is held until the
// allocation is ready or has ended, at most that long (bounded by
// maxAllocationWait), so that srun outside an allocation starts its step
// the moment the nodes took their launches rather than at its next look.
func (s *Server) allocation(ctx context.Context, caller peer, id uint64, req api.AllocationRequest) (api.Allocation, error) {
	if req.WaitReadyMs > 0 && !req.Release {
		signals := func() (launched, ended <-chan struct{}) {
			s.mu.RLock()
			defer s.mu.RUnlock()
			return s.pipe.launchSignal(), s.pipe.endSignal()
		}
		wait := min(time.Duration(req.WaitReadyMs)*time.Millisecond, maxAllocationWait)
		return s.pipe.holdAllocation(ctx, wait, signals, func() (api.Allocation, error) {
			return s.allocation(ctx, caller, id, api.AllocationRequest{})
		})
	}
	now := time.Now()
	s.mu.Lock()
	j := s.q.job(id)
	switch {
	case j == nil:
		s.mu.Unlock()
		return api.Allocation{}, fault.Errorf(fault.NotFound, "job %d does not exist", id)
	case !s.gate.MayAct(caller.caller(), j.rec.Job.UID):
		s.mu.Unlock()
		return api.Allocation{}, fault.Errorf(fault.Forbidden, "job %d belongs to %s", id, j.rec.Job.User)
	case !j.rec.Job.Spec.Allocation:
		s.mu.Unlock()
		return api.Allocation{}, fault.Errorf(fault.Invalid, "job %d is a batch job, not an allocation (salloc)", id)
	}
	j.alloc.seen = now
	var changes []change
	var signals []signalOrder
	if req.Release && !j.state().Terminal() && j.alloc.released == nil {
		switch {
		case j.state() == api.StatePending:
			changes = s.cancelledLocked(changes, j, "released before it started", now)
		case s.nodes.isUp(j.batchHost()):
			code := req.ExitCode
			j.alloc.released = &code
			signals = append(signals, s.nodes.signalOrder(id, j.batchHost()))
		default: // nothing to stop there: it ends now
			next, err := step(j.rec, lifecycle.Event{Kind: lifecycle.End, State: releasedState(req.ExitCode),
				ExitCode: req.ExitCode, Message: "released while node " + j.batchHost() + " was down"}, now)
			if err == nil {
				changes = append(changes, change{j, next})
			}
		}
	}
	err := s.q.commit(changes, nil)
	out := allocationView(j, renewEvery(s.cfg.AllocIdleLimit))
	s.mu.Unlock()
	if err != nil {
		return api.Allocation{}, err
	}
	if len(changes) > 0 {
		s.Kick()
	}
	user := s.users.name(caller.UID)
	if req.Release {
		s.log.Printf("job %d: allocation released by %s, exit code %d", id, user, req.ExitCode)
	}
	if len(signals) > 0 {
		// The client does not wait for the node: the release is recorded,
		// and the node's report of the stop ends the job whenever it comes
		// (a node that cannot be reached ends it here: sendSignals). srun
		// outside an allocation exits the sooner.
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			s.sendSignals(s.bgCtx, signals, user)
		}()
	}
	return out, nil
}

// maxAllocationWait bounds a held renewal; a test lengthens it.
var maxAllocationWait = api.MaxAllocationWait

// allocationView is where allocation j stands for its client.
func allocationView(j *job, renew int) api.Allocation {
	job := &j.rec.Job
	return api.Allocation{JobID: job.ID, State: job.State, Reason: job.Reason, Nodes: job.Nodes, CPUs: job.CPUs,
		Partition: job.Partition, ClusterName: ClusterName,
		Ready: job.State == api.StateRunning && j.launch.inFlight == 0 && j.alloc.released == nil && !j.cancelRequested,
		Renew: renew, Message: job.Message}
}

// expireAllocations cancels the allocations whose client has not renewed
// them for allocIdleLimit. An allocation not seen since its submit or
// the controller's start is seen now: its client gets the whole bound.
func (s *Server) expireAllocations(now time.Time) {
	s.mu.Lock()
	var idle []*job
	var ids []uint64
	for id, j := range s.q.unfinished() {
		switch a := &j.alloc; {
		case !j.rec.Job.Spec.Allocation || a.released != nil || j.cancelRequested:
		case a.seen.IsZero():
			a.seen = now
		case s.cfg.AllocIdleLimit < 0: // InactiveLimit=0: never
		case now.Sub(a.seen) >= s.cfg.AllocIdleLimit:
			idle, ids = append(idle, j), append(ids, id)
		}
	}
	if len(idle) == 0 {
		s.mu.Unlock()
		return
	}
	changes, _, signals := s.cancelOrdersLocked(idle, nil, now) // nil: no one's cancel to record
	err := s.q.commit(changes, nil)
	s.mu.Unlock()
	if err != nil {
		s.log.Printf("cancel idle allocations: %v", err)
		return
	}
	for _, id := range ids {
		s.log.Printf("job %d: its client stopped renewing the allocation for %s: cancelling it", id, s.cfg.AllocIdleLimit)
	}
	s.Kick()
	s.sendSignals(s.bgCtx, signals, "the inactivity limit")
}
