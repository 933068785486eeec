package ctld

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
)

// Hold, release, requeue and update: scontrol's job verbs. Users may act
// on their own jobs, root on any. A request names jobs as users do: an
// array job ID acts on every task of it (its pending remainder included),
// 123_4 on one task, which then gets a job of its own.

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
	if len(req.IDs)+len(req.Tasks) == 0 {
		return api.JobsResponse{}, fault.Errorf(fault.Invalid, "nothing to %s: give job IDs", action)
	}
	if err := tooManyRefs(action, len(req.IDs)+len(req.Tasks), "jobs"); err != nil {
		return api.JobsResponse{}, err
	}
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
	err := s.q.commit(op.changes, op.rems)
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
		if !s.gate.MayAct(caller.caller(), job.UID) {
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
		if !s.gate.MayAct(caller.caller(), r.UID) {
			return fmt.Sprintf("job %s belongs to %s", ref, r.User)
		}
		job, err := lifecycle.Next(*r, holdEvent(s.gate.IsOperator(caller.caller()), action), now)
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
		next, err := step(j.rec, holdEvent(s.gate.IsOperator(caller.caller()), action), now)
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
			op.requeues = append(op.requeues, s.nodes.signalOrder(job.ID, j.batchHost()))
		}
		return &next, ""
	}
	return nil, "unknown action " + action
}

// holdEvent is a hold or release as a lifecycle event; byOperator (an
// operator or above) makes a hold only operators may release.
func holdEvent(byOperator bool, action string) lifecycle.Event {
	kind := lifecycle.Hold
	if action == "release" {
		kind = lifecycle.Release
	}
	return lifecycle.Event{Kind: kind, ByOperator: byOperator}
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
