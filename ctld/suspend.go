package ctld

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// Suspend and resume (scontrol suspend, resume; operators and above, as
// in Slurm): every node of the job freezes or thaws its processes (noded's
// POST /v1/jobs/suspend), then the job's new state is committed. A node
// that fails undoes the others, and the job stays as it was. A suspended
// job keeps its nodes (Slurm frees its CPUs for others, which corral
// does not: no two jobs ever share cores), its time limit's clock stops,
// and a cancel thaws it to end it. Refusals are Slurm's words.
const (
	suspendPending = "Job is pending execution" // ESLURM_JOB_PENDING
	resumeNotSusp  = "Job is not suspended"     // ESLURM_JOB_NOT_SUSPENDED
	nodeSuspend    = "/v1/jobs/suspend"         // noded's route
	suspendTimeout = 15 * time.Second           // a freeze waits for the kernel
)

// freezeOrder is one job's freeze or thaw on all its nodes.
type freezeOrder struct {
	ref     string
	id      uint64
	nodes   []string
	clients []*api.NodeClient
}

// suspendJobs suspends (action "suspend") or resumes the named jobs. An
// array job's ID acts on its tasks that can.
func (s *Server) suspendJobs(caller peer, action string, req api.JobsRequest) (api.JobsResponse, error) {
	if len(req.IDs)+len(req.Tasks) == 0 {
		return api.JobsResponse{}, fault.Errorf(fault.Invalid, "nothing to %s: give job IDs", action)
	}
	if err := tooManyRefs(action, len(req.IDs)+len(req.Tasks), "jobs"); err != nil {
		return api.JobsResponse{}, err
	}
	suspend := action == "suspend"
	errs := newRefusals[string]()
	refused := map[string]bool{}
	var orders []freezeOrder
	s.mu.Lock()
	for _, ref := range refsOf(req) {
		jobs, _, msg := s.q.resolve(ref)
		acted := false
		for _, j := range jobs {
			why := j.suspendRefusal(suspend)
			if why == "" && (j.state() == api.StateSuspended) == suspend {
				acted = true // already so: nothing to do, as in Slurm
				continue
			}
			o := freezeOrder{ref: ref.String(), id: j.rec.Job.ID}
			for _, n := range j.rec.Job.Nodes {
				if why == "" && !s.nodes.isUp(n) {
					why = fmt.Sprintf("job %s: node %s is down", ref, n)
				}
				o.nodes, o.clients = append(o.nodes, n), append(o.clients, s.nodes.client(n))
			}
			if why != "" {
				msg = why
				continue
			}
			orders, acted = append(orders, o), true
		}
		if !acted {
			errs.add(ref.String(), "%s", msg)
			refused[ref.String()] = true
		}
	}
	s.mu.Unlock()

	failed := make([]error, len(orders))
	var wg sync.WaitGroup
	for i, o := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed[i] = o.freeze(s.bgCtx, suspend)
		}()
	}
	wg.Wait()

	now := time.Now()
	kind := lifecycle.Resume
	if suspend {
		kind = lifecycle.Suspend
	}
	s.mu.Lock()
	var changes []change
	for i, o := range orders {
		j := s.q.job(o.id)
		if failed[i] != nil || j == nil {
			continue
		}
		next, err := step(j.rec, lifecycle.Event{Kind: kind}, now)
		if err != nil { // it ended meanwhile
			failed[i] = slurmRefusal(signalDone)
			continue
		}
		changes = append(changes, change{j, next})
	}
	err := s.q.commit(changes, nil)
	s.mu.Unlock()
	if err != nil {
		for i, o := range orders { // the state stays: so must the processes
			if failed[i] == nil {
				_ = o.freeze(s.bgCtx, !suspend)
			}
		}
		return api.JobsResponse{}, err
	}
	by := s.users.name(caller.UID)
	for _, c := range changes {
		s.log.Printf("%s job %s by %s", action, api.JobRefText(&c.next.Job), by)
	}
	for i, o := range orders {
		if failed[i] != nil {
			errs.add(o.ref, "%v", failed[i])
			refused[o.ref] = true
		}
	}
	resp := api.JobsResponse{Done: []string{}}
	for _, ref := range refsOf(req) {
		if !refused[ref.String()] {
			resp.Done = append(resp.Done, ref.String())
		}
	}
	resp.Errors, resp.ErrorCount = errs.listed(), errs.count
	return resp, nil
}

// suspendRefusal says why j cannot be suspended (suspend) or resumed;
// "" when it can, or already is so. Called with Server.mu held.
func (j *job) suspendRefusal(suspend bool) string {
	switch st := j.state(); {
	case st == api.StatePending:
		return suspendPending
	case st.Terminal() || j.cancelRequested || j.rec.RequeueRequested:
		return signalDone
	case !suspend && st != api.StateSuspended:
		return resumeNotSusp
	}
	return ""
}

// freeze asks every node of the order to freeze (or thaw) the job; when
// one fails, those that did are undone.
func (o freezeOrder) freeze(ctx context.Context, frozen bool) error {
	errs := make([]error, len(o.nodes))
	var wg sync.WaitGroup
	for i, n := range o.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.clients[i] == nil {
				errs[i] = fmt.Errorf("node %s is not registered", n)
				return
			}
			cctx, cancel := context.WithTimeout(ctx, suspendTimeout)
			defer cancel()
			if err := o.clients[i].Do(cctx, http.MethodPost, nodeSuspend, api.NodeSuspendRequest{JobID: o.id, Suspend: frozen}, nil); err != nil {
				errs[i] = fmt.Errorf("node %s could not %s the job: %v", n, map[bool]string{true: "suspend", false: "resume"}[frozen], err)
			}
		}()
	}
	wg.Wait()
	first := errors.Join(errs...)
	if first == nil {
		return nil
	}
	for i, err := range errs { // undo where it worked
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, suspendTimeout)
			_ = o.clients[i].Do(cctx, http.MethodPost, nodeSuspend, api.NodeSuspendRequest{JobID: o.id, Suspend: !frozen}, nil)
			cancel()
		}
	}
	return first
}

// slurmRefusal is a refusal in Slurm's words, which start with a capital.
type slurmRefusal string

func (r slurmRefusal) Error() string { return string(r) }
