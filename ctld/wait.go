package ctld

import (
	"context"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Long polls: GET /v1/jobs/{id}/wait answers when the job ends or when
// its timeout passes, whichever comes first; the client asks again.
const (
	defaultWaitTimeout = 30 * time.Second
	maxWaitTimeout     = 5 * time.Minute
)

// wait answers where the job ref names stands once it ends, or when
// timeout passes, the controller stops or ctx ends, whichever is first.
func (s *Server) wait(ctx context.Context, caller peer, ref jobRef, timeout time.Duration) (api.WaitResponse, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	s.mu.RLock()
	view, msg := s.q.view(ref)
	s.mu.RUnlock()
	if msg == "" && !s.gate.MayView(caller.caller(), view.UID) {
		return api.WaitResponse{}, fault.Errorf(fault.Forbidden, "job %s belongs to %s: you may see only your own jobs", ref, view.User)
	}
	for {
		s.mu.RLock()
		resp, msg := s.q.waitState(ref)
		ended := s.pipe.endSignal()
		s.mu.RUnlock()
		if msg != "" {
			return api.WaitResponse{}, fault.Errorf(fault.NotFound, "%s", msg)
		}
		if resp.Done {
			return resp, nil
		}
		select {
		case <-ended:
		case <-timer.C:
			return resp, nil
		case <-s.pipe.stopping():
			return resp, nil
		case <-ctx.Done():
			return resp, ctx.Err()
		}
	}
}

func jobWait(j *api.Job) api.WaitResponse {
	return api.WaitResponse{Done: j.State.Terminal(), State: j.State, ExitStatus: exitStatus(j)}
}

// exitStatus is what sbatch --wait exits with for a finished job: its
// exit code, or 1 when it ended without one of its own (a signal, a
// cancel, a lost node).
func exitStatus(j *api.Job) int {
	switch {
	case j.State == api.StateCompleted:
		return 0
	case j.ExitCode != nil && j.Signal == 0 && *j.ExitCode > 0:
		return *j.ExitCode
	}
	return 1
}

func (q *queue) arrayWait(a *arrayJob) api.WaitResponse {
	remLive := a.rem != nil && !a.rem.Job.State.Terminal()
	if remLive || a.live > 0 {
		return api.WaitResponse{State: api.StatePending}
	}
	resp := api.WaitResponse{Done: true, State: api.StateCompleted}
	worst := func(st api.JobState, status int) {
		if status > resp.ExitStatus || resp.State == api.StateCompleted && st != api.StateCompleted {
			resp.State, resp.ExitStatus = st, max(status, resp.ExitStatus)
		}
	}
	if a.rem != nil && a.remCount > 0 {
		worst(a.rem.Job.State, 1)
	}
	for pos := 0; pos < a.count; pos++ {
		if j := q.jobs[a.base+uint64(pos)]; j != nil {
			worst(j.rec.Job.State, exitStatus(&j.rec.Job))
		}
	}
	return resp
}

// waitState is where the job a reference names stands. An array job
// is done once its remainder is gone (or ended) and no task runs or waits.
func (q *queue) waitState(ref jobRef) (api.WaitResponse, string) {
	if ref.task == nil {
		if a := q.arrays[ref.id]; a != nil {
			return q.arrayWait(a), ""
		}
	}
	id := ref.id
	if ref.task != nil {
		a := q.arrays[ref.id]
		if a == nil {
			return api.WaitResponse{}, "array job " + strconv.FormatUint(ref.id, 10) + " does not exist"
		}
		tid, ok := a.idOf(*ref.task)
		if !ok {
			return api.WaitResponse{}, "array job " + strconv.FormatUint(ref.id, 10) + " has no task " + strconv.Itoa(*ref.task)
		}
		id = tid
	}
	if j := q.jobs[id]; j != nil {
		return jobWait(&j.rec.Job), ""
	}
	if a := q.arrayOf(id); a != nil && a.rem != nil {
		if index, _ := a.indexOf(id); a.pendingIndex(index) {
			return api.WaitResponse{Done: a.rem.Job.State.Terminal(), State: a.rem.Job.State, ExitStatus: 1}, ""
		}
	}
	return api.WaitResponse{}, "job " + ref.String() + " does not exist"
}
