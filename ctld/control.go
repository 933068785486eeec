package ctld

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/jobspec"
)

// Hold, release, requeue and update: scontrol's job verbs. Users may act
// on their own jobs, root on any. A request names jobs as users do: an
// array job ID acts on every task of it (its pending remainder included),
// 123_4 on one task, which then gets a job of its own.

func (s *Server) handleControl(action string) callerHandler {
	return func(w http.ResponseWriter, r *http.Request, caller peer) {
		var req api.JobsRequest
		if err := decodeBody(r.Body, &req, true); err != nil {
			writeError(w, err)
			return
		}
		if len(req.IDs)+len(req.Tasks) == 0 {
			writeError(w, fault.Errorf(fault.Invalid, "nothing to %s: give job IDs", action))
			return
		}
		if err := tooManyRefs(action, len(req.IDs)+len(req.Tasks), "jobs"); err != nil {
			writeError(w, err)
			return
		}
		resp, err := s.control(caller, action, req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

// jobRef is one job a request names.
type jobRef struct {
	id   uint64
	task *int
}

func (r jobRef) String() string { return describeRef(r.id, r.task) }

func refsOf(req api.JobsRequest) []jobRef {
	var refs []jobRef
	for _, id := range req.IDs {
		refs = append(refs, jobRef{id: id})
	}
	for _, t := range req.Tasks {
		task := t.Task
		refs = append(refs, jobRef{id: t.JobID, task: &task})
	}
	slices.SortStableFunc(refs, func(a, b jobRef) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(refs, func(a, b jobRef) bool { return a.String() == b.String() })
}

// mayAct and mayModify (package authz) say who may control and change a job.

// controlOp is one request's pending work.
type controlOp struct {
	changes  []change
	rems     []remChange
	requeues []signalOrder
	seen     map[uint64]bool
}

func (op *controlOp) add(j *job, next store.JobRecord) {
	op.seen[next.Job.ID] = true
	op.changes = append(op.changes, change{j, next})
}

// control holds, releases or requeues the named jobs.
func (s *Server) control(caller peer, action string, req api.JobsRequest) (api.JobsResponse, error) {
	resp := api.JobsResponse{Done: []string{}}
	errs := newRefusals[string]() // the first 100 listed, all counted
	op := &controlOp{seen: make(map[uint64]bool)}
	now := time.Now()
	s.mu.Lock()
	for _, ref := range refsOf(req) {
		jobs, rem, msg := s.q.resolve(ref)
		if msg == "" {
			msg = s.controlOneLocked(caller, action, ref, jobs, rem, op, now)
		}
		if msg != "" {
			errs.add(ref.String(), "%s", msg)
		} else {
			resp.Done = append(resp.Done, ref.String())
		}
	}
	err := s.commitAllLocked(op.changes, op.rems)
	s.mu.Unlock()
	if err != nil {
		return api.JobsResponse{}, err
	}
	by := s.users.name(caller.UID)
	for _, c := range op.changes {
		s.log.Printf("%s job %s by %s (%s)", action, api.JobRefText(&c.next.Job), by, c.next.Job.State)
	}
	for _, r := range op.rems {
		s.log.Printf("%s array job %d pending tasks by %s", action, r.a.base, by)
	}
	for _, o := range op.requeues {
		s.signalRequeue(o, by)
	}
	resp.Errors, resp.ErrorCount = errs.listed(), errs.count
	if len(op.changes)+len(op.rems) > 0 {
		s.Kick()
	}
	return resp, nil
}

// controlOneLocked applies action to what one reference resolved to and
// returns why not, "" when something was done.
func (s *Server) controlOneLocked(caller peer, action string, ref jobRef, jobs []*job, rem *arrayJob, op *controlOp, now time.Time) string {
	whole := rem != nil // a whole array: tasks in the wrong state are skipped
	did := 0
	var why string
	for _, j := range jobs {
		if op.seen[j.rec.Job.ID] {
			continue
		}
		job := &j.rec.Job
		if !s.mayAct(caller, job) {
			return fmt.Sprintf("job %s belongs to %s", ref, job.User)
		}
		next, msg := s.controlJobLocked(caller, action, j, op, now)
		if msg != "" {
			why = msg
			if !whole {
				return msg
			}
			continue
		}
		if next != nil {
			op.add(j, *next)
		}
		did++
	}
	if r := rem.pendingRem(); r != nil && action != "requeue" {
		if !s.mayAct(caller, r) {
			return fmt.Sprintf("job %s belongs to %s", ref, r.User)
		}
		job, err := lifecycle.Next(*r, holdEvent(caller, action), now)
		if err != nil {
			return err.Error()
		}
		op.rems = append(op.rems, rem.withRemJob(job))
		did++
	}
	if did == 0 {
		if why == "" {
			why = fmt.Sprintf("job %s has no task to %s", ref, action)
		}
		return why
	}
	return ""
}

// controlJobLocked decides one job's change; next nil with no message
// means the change is made by a signal (a running job's requeue).
func (s *Server) controlJobLocked(caller peer, action string, j *job, op *controlOp, now time.Time) (*store.JobRecord, string) {
	job := &j.rec.Job
	ref := api.JobRefText(job)
	switch action {
	case "hold", "release":
		next, err := step(j.rec, holdEvent(caller, action), now)
		if err != nil {
			return nil, err.Error()
		}
		return &next, ""
	case "requeue":
		ev := lifecycle.Event{Kind: lifecycle.Requeue}
		if !job.State.Terminal() {
			ev.Message = "requeued while node " + j.batchHost() + " was down"
		}
		next, err := step(j.rec, ev, now) // refused for a pending job
		switch {
		case err != nil:
			return nil, err.Error()
		case job.Spec.Requeue != nil && !*job.Spec.Requeue:
			return nil, fmt.Sprintf("job %s was submitted with --no-requeue", ref)
		case j.rec.RequeueRequested || j.cancelRequested:
			return nil, fmt.Sprintf("job %s is already ending", ref)
		case !job.State.Terminal() && s.nodes.isUp(j.batchHost()):
			// The node ends the run; its end event requeues the job.
			next = j.rec
			next.RequeueRequested = true
			op.requeues = append(op.requeues, signalOrder{id: job.ID, node: j.batchHost(), client: s.nodes.get(j.batchHost()).client})
		}
		return &next, ""
	}
	return nil, "unknown action " + action
}

// holdEvent is caller's hold or release as a lifecycle event.
func holdEvent(caller peer, action string) lifecycle.Event {
	kind := lifecycle.Hold
	if action == "release" {
		kind = lifecycle.Release
	}
	return lifecycle.Event{Kind: kind, ByOperator: caller.atLeast(authz.Operator)}
}

// signalRequeue asks the node to end a run being requeued; a node that
// cannot be reached has the job requeued at once.
func (s *Server) signalRequeue(o signalOrder, by string) {
	ctx, cancel := context.WithTimeout(s.bgCtx, signalTimeout)
	err := o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
	cancel()
	if err == nil {
		s.log.Printf("requeue job %d by %s: signalled node %s", o.id, by, o.node)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.q.job(o.id)
	if j == nil || j.state() != api.StateRunning || !j.rec.RequeueRequested || s.bgCtx.Err() != nil {
		return
	}
	next, cerr := step(j.rec, lifecycle.Event{Kind: lifecycle.Requeue, Message: "node " + o.node + " could not be signalled: " + err.Error()}, time.Now())
	if cerr == nil {
		cerr = s.commitLocked([]change{{j, next}})
	}
	if cerr != nil {
		s.log.Printf("requeue job %d: %v", o.id, cerr)
		return
	}
	s.log.Printf("requeue job %d by %s: node %s unreachable (%v)", o.id, by, o.node, err)
	s.Kick()
}

// requeueOnNodeFail: a job whose node failed is requeued when it was being
// requeued anyway, asked for --requeue, or the cluster requeues by default.
func (s *Server) requeueOnNodeFail(j *job) bool {
	if j.rec.RequeueRequested {
		return true
	}
	if r := j.rec.Job.Spec.Requeue; r != nil {
		return *r
	}
	return s.cfg.Pipeline.RequeueOnNodeFail
}

// enforceTimeLimits stops running jobs at a time limit lowered while they
// ran (the node enforces only the limit it was launched with).
func (s *Server) enforceTimeLimits(now time.Time) {
	s.mu.Lock()
	var orders []signalOrder
	for _, j := range s.q.unfinished() {
		job := &j.rec.Job
		if !j.rec.EnforceTimeLimit || job.State != api.StateRunning || j.limitSignalled || j.cancelRequested ||
			job.StartTime == nil || now.Before(job.StartTime.Add(time.Duration(job.TimeLimit)*time.Second)) ||
			!s.nodes.isUp(j.batchHost()) {
			continue
		}
		j.limitSignalled = true
		orders = append(orders, signalOrder{id: job.ID, node: j.batchHost(), client: s.nodes.get(j.batchHost()).client})
	}
	s.mu.Unlock()
	for _, o := range orders {
		ctx, cancel := context.WithTimeout(s.bgCtx, signalTimeout)
		err := o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
		cancel()
		if err == nil {
			s.log.Printf("job %d reached its lowered time limit: signalled node %s", o.id, o.node)
			continue
		}
		s.mu.Lock()
		if j := s.q.job(o.id); j != nil {
			j.limitSignalled = false // try again next time
		}
		s.mu.Unlock()
	}
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.UpdateRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.update(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// update changes the time limit, nice or name of a pending or running job
// (every unfinished task of an array job).
func (s *Server) update(caller peer, req api.UpdateRequest) (api.JobsResponse, error) {
	bad := func(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }
	switch {
	case req.ID == 0:
		return api.JobsResponse{}, bad("update: give a job ID")
	case req.TimeLimit == nil && req.Nice == nil && req.Name == nil:
		return api.JobsResponse{}, bad("update: nothing to change: give TimeLimit, Nice or Name")
	case req.TimeLimit != nil && *req.TimeLimit < 0:
		return api.JobsResponse{}, bad("update: TimeLimit must not be negative")
	case req.Name != nil && !jobspec.ValidJobName(*req.Name):
		return api.JobsResponse{}, bad("update: %v", jobspec.CheckJobName(*req.Name))
	case req.Nice != nil && (*req.Nice < -2147483645 || *req.Nice > 2147483645):
		return api.JobsResponse{}, bad("update: Nice must be within ±2147483645")
	case req.Nice != nil && *req.Nice < 0 && caller.UID != 0:
		return api.JobsResponse{}, fault.Errorf(fault.Forbidden, "update: only root may set a negative Nice")
	}
	ref := jobRef{id: req.ID, task: req.Task}
	resp := api.JobsResponse{Done: []string{}}
	s.mu.Lock()
	jobs, rem, msg := s.q.resolve(ref)
	var changes []change
	var rems []remChange
	for _, j := range jobs {
		if msg != "" {
			break
		}
		if j.state().Terminal() {
			if rem == nil {
				msg = fmt.Sprintf("job %s already finished (%s)", ref, j.state())
			}
			continue
		}
		next := j.rec
		if msg = s.updateJobLocked(caller, req, &next.Job); msg == "" {
			if req.TimeLimit != nil && j.state() == api.StateRunning {
				next.EnforceTimeLimit = true
			}
			changes = append(changes, change{j, next})
		}
	}
	if r := rem.pendingRem(); msg == "" && r != nil {
		next := *r
		if msg = s.updateJobLocked(caller, req, &next); msg == "" {
			rems = append(rems, rem.withRemJob(next))
		}
	}
	if msg == "" && len(changes)+len(rems) == 0 {
		msg = fmt.Sprintf("job %s has nothing left to update", ref)
	}
	var err error
	if msg == "" {
		err = s.commitAllLocked(changes, rems)
	}
	s.mu.Unlock()
	if err != nil {
		return api.JobsResponse{}, err
	}
	if msg != "" {
		resp.Errors = map[string]string{ref.String(): msg}
		return resp, nil
	}
	resp.Done = append(resp.Done, ref.String())
	s.log.Printf("update job %s by %s: %s", ref, s.users.name(caller.UID), describeUpdate(req))
	s.Kick()
	return resp, nil
}

// updateJobLocked applies req to job, or says why not.
func (s *Server) updateJobLocked(caller peer, req api.UpdateRequest, job *api.Job) string {
	ref := api.JobRefText(job)
	if !s.mayModify(caller, job) {
		return fmt.Sprintf("job %s belongs to %s", ref, job.User)
	}
	if req.TimeLimit != nil {
		limit := *req.TimeLimit
		lower := job.TimeLimit == 0 && limit > 0 || limit <= job.TimeLimit && limit > 0
		switch {
		case caller.UID != 0 && !lower:
			return fmt.Sprintf("job %s: you may only lower the time limit (it is %s)", ref, formatLimit(job.TimeLimit))
		case job.State == api.StateRunning && !lower:
			return fmt.Sprintf("job %s is running: its time limit can only be lowered", ref)
		}
		job.TimeLimit = limit
		job.Spec.TimeLimit, job.Spec.TimeUnlimited = limit, limit == 0
	}
	if req.Nice != nil {
		job.Spec.Nice = *req.Nice
	}
	if req.Name != nil {
		job.Name, job.Spec.Name = *req.Name, *req.Name
	}
	return ""
}

func formatLimit(s int64) string {
	if s == 0 {
		return "UNLIMITED"
	}
	return config.FormatTime(s)
}

func describeUpdate(req api.UpdateRequest) string {
	var parts []string
	if req.TimeLimit != nil {
		parts = append(parts, "TimeLimit="+formatLimit(*req.TimeLimit))
	}
	if req.Nice != nil {
		parts = append(parts, fmt.Sprintf("Nice=%d", *req.Nice))
	}
	if req.Name != nil {
		parts = append(parts, "Name="+*req.Name)
	}
	return strings.Join(parts, " ")
}
