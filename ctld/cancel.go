package ctld

import (
	"cmp"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// cancelBatch is how many jobs one commit of a cancel ends: a filter
// may reach every job a user has, and one transaction of 100,000
// records holds them all in memory at once.
const cancelBatch = 1000

// cancel ends pending jobs at once and asks nodes to stop running ones;
// those end when their node reports (CANCELLED). A running job whose node
// is DOWN or unreachable ends CANCELLED at once, and the node is told to
// kill it when it registers again (it reports a job ctld has finished).
// A request names at most api.MaxRefsPerRequest jobs; its answer lists at
// most that many cancelled IDs and api.MaxListedErrors refusals, and
// counts them all (refusals).
func (s *Server) cancel(caller peer, req api.CancelRequest) (api.CancelResponse, error) {
	resp := api.CancelResponse{Cancelled: []uint64{}}
	if len(req.IDs) == 0 && len(req.Tasks) == 0 && req.User == "" && len(req.States) == 0 && req.Name == "" {
		return resp, fault.Errorf(fault.Invalid, "nothing to cancel: give job IDs or a filter (user, states, name)")
	}
	if err := tooManyRefs("cancel", len(req.IDs)+len(req.Tasks), "jobs"); err != nil {
		return resp, err
	}
	states := make([]api.JobState, len(req.States))
	for i, st := range req.States {
		parsed, err := api.ParseJobState(string(st)) // short codes and any case too
		if err != nil {
			return resp, fault.Errorf(fault.Invalid, "%v", err)
		}
		states[i] = parsed
	}
	req.States = states
	slices.Sort(req.IDs)
	req.IDs = slices.Compact(req.IDs)
	slices.SortFunc(req.Tasks, compareTasks)
	req.Tasks = slices.Compact(req.Tasks)
	callerName := s.users.name(caller.UID)
	errs := newRefusals[uint64]()
	matches := func(j *api.Job) bool {
		return (req.User == "" || j.User == req.User) &&
			(len(req.States) == 0 || slices.Contains(req.States, j.State)) &&
			(req.Name == "" || j.Name == req.Name)
	}

	now := time.Now()
	s.mu.Lock()
	// Array jobs, and tasks without a job of their own, first (the queue).
	mine := func(job *api.Job) bool { return s.gate.MayAct(caller.caller(), job.UID) }
	otherUser := req.User != "" && req.User != callerName
	plain, targets, rems := s.q.cancelTargets(req, matches, mine, otherUser, errs, now)
	for _, id := range plain {
		j := s.q.job(id)
		switch {
		case j == nil:
			errs.addGone(id, "job %d does not exist", id)
		case !mine(&j.rec.Job):
			errs.add(id, "job %d belongs to %s", id, j.rec.Job.User)
		case j.state().Terminal():
			errs.addGone(id, "job %d already finished (%s)", id, j.state())
		case !matches(&j.rec.Job):
			errs.add(id, "job %d does not match the given filters", id)
		default:
			targets = append(targets, j)
		}
	}
	if len(req.IDs) == 0 && len(req.Tasks) == 0 {
		// Filters only: a user's filter reaches their own jobs unless they
		// name another user, whose jobs then get "belongs to" errors.
		for id, j := range s.q.unfinished() {
			if !matches(&j.rec.Job) {
				continue
			}
			if !mine(&j.rec.Job) {
				if otherUser {
					errs.add(id, "job %d belongs to %s", id, j.rec.Job.User)
				}
				continue
			}
			targets = append(targets, j)
		}
	}
	targets = uniqueJobs(targets)
	var cancelled []uint64
	var signals []signalOrder
	var err error
	for first := true; first || len(targets) > 0; first = false {
		batch := targets[:min(len(targets), cancelBatch)]
		targets = targets[len(batch):]
		changes, marks, orders := s.cancelOrdersLocked(batch, &caller.UID, now)
		if err = s.q.commit(slices.Concat(changes, marks), rems); err != nil {
			break
		}
		signals = append(signals, orders...)
		for _, c := range changes {
			s.log.Printf("end job %d CANCELLED by %s", c.next.Job.ID, callerName)
			cancelled = append(cancelled, c.next.Job.ID)
		}
		for _, r := range rems {
			s.log.Printf("end array job %d pending tasks CANCELLED by %s", r.a.base, callerName)
			cancelled = append(cancelled, r.a.base)
		}
		rems = nil
	}
	s.mu.Unlock()
	if len(cancelled) > 0 {
		s.Kick()
	}
	// Signals use the server's context, not the request's: a client that
	// hangs up must not make a reachable node look unreachable. They go
	// out even when a later batch failed: their jobs are marked.
	cancelled = append(cancelled, s.sendSignals(s.bgCtx, signals, callerName)...)
	if err != nil {
		return api.CancelResponse{}, err
	}
	slices.Sort(cancelled)
	cancelled = slices.Compact(cancelled)
	resp.CancelledCount, resp.ErrorCount = len(cancelled), errs.count
	resp.Cancelled = append(resp.Cancelled, cancelled[:min(len(cancelled), api.MaxRefsPerRequest)]...)
	resp.Errors = errs.listed()
	resp.Gone, resp.GoneCount = errs.gone, errs.goneCount
	slices.Sort(resp.Gone)
	return resp, nil
}

// cancelOrdersLocked decides how each target ends: pending ones and those
// on a node that is down at once (changes), running ones by a signal,
// with by recorded on their stored record (marks) so that a controller
// restart before the node's report keeps who cancelled them. by is the
// uid cancelling them (nil: the controller itself).
func (s *Server) cancelOrdersLocked(targets []*job, by *uint32, now time.Time) (changes, marks []change, signals []signalOrder) {
	for _, j := range targets {
		j.cancelBy = by
		switch {
		case j.state() == api.StatePending:
			changes = s.cancelledLocked(changes, j, "", now)
		case s.nodes.isUp(j.batchHost()):
			j.cancelRequested = true
			signals = append(signals, s.nodes.signalOrder(j.rec.Job.ID, j.batchHost()))
			if by != nil {
				next, uid := j.rec, *by
				next.CancelRequestedBy = &uid
				marks = append(marks, change{j, next})
			}
		default:
			changes = s.cancelledLocked(changes, j, "cancelled while node "+j.batchHost()+" was down", now)
		}
	}
	return changes, marks, signals
}

// cancelledLocked adds j's cancel to changes.
func (s *Server) cancelledLocked(changes []change, j *job, msg string, now time.Time) []change {
	next, err := step(j.rec, lifecycle.Event{Kind: lifecycle.Cancel, Message: msg}, now)
	if err != nil { // targets are unfinished: not reached
		s.log.Printf("cancel job %d: %v", j.rec.Job.ID, err)
		return changes
	}
	return append(changes, change{j, next})
}

// recordCanceller puts on a job that a change ends CANCELLED the uid
// whose cancel ended it. A running job's cancel ends it only when its
// node reports, so the uid waits on the job until then, and on its stored
// record (CancelRequestedBy), from which a restarted controller takes it
// back.
func recordCanceller(c *change) {
	if by := c.j.cancelBy; by != nil && c.next.Job.State == api.StateCancelled && c.next.Job.CancelledBy == nil {
		uid := *by
		c.next.Job.CancelledBy = &uid
	}
}

func compareTasks(a, b api.TaskRef) int {
	return cmp.Or(cmp.Compare(a.JobID, b.JobID), cmp.Compare(a.Task, b.Task))
}

// cancelTargets sorts out what a cancel names in array jobs. An array
// job ID cancels its unfinished tasks and its pending remainder; a task
// (by 123_4 or by its own ID) that has no job of its own gets one, to be
// cancelled. plain are the other IDs; filters reach remainders too, and
// refuse those not mine with an error when the filter named otherUser.
func (q *queue) cancelTargets(req api.CancelRequest, matches, mine func(*api.Job) bool, otherUser bool,
	errs *refusals[uint64], now time.Time) (plain []uint64, targets []*job, rems []remChange) {
	remMatches := func(a *arrayJob) bool {
		r := a.pendingRem()
		return r != nil && matches(r)
	}
	for _, id := range req.IDs {
		a := q.arrays[id]
		switch {
		case a != nil:
			found, owner := false, "" // owner: of a task or remainder not the caller's
			for pos := 0; pos < a.count; pos++ {
				if j := q.jobs[a.base+uint64(pos)]; j != nil && !j.state().Terminal() && matches(&j.rec.Job) {
					found = true
					if !mine(&j.rec.Job) {
						owner = j.rec.Job.User
						continue
					}
					targets = append(targets, j)
				}
			}
			if remMatches(a) {
				found = true
				if mine(a.remJob()) {
					rems = appendRemEnded(rems, a, now)
				} else {
					owner = a.remJob().User
				}
			}
			switch {
			case !found && req.User == "" && len(req.States) == 0 && req.Name == "":
				errs.addGone(id, "array job %d has no unfinished task", id) // they all ended
			case !found:
				errs.add(id, "array job %d has no unfinished task matching the request", id)
			case owner != "":
				errs.add(id, "job %d belongs to %s", id, owner)
			}
		case q.jobs[id] == nil && q.arrayOf(id) != nil:
			index, _ := q.arrayOf(id).indexOf(id)
			t := index
			req.Tasks = append(req.Tasks, api.TaskRef{JobID: q.arrayOf(id).base, Task: t})
		default:
			plain = append(plain, id)
		}
	}
	for _, t := range req.Tasks {
		task := t.Task
		jobs, _, msg := q.resolve(jobRef{id: t.JobID, task: &task})
		key := t.JobID
		if a := q.arrays[t.JobID]; a != nil {
			if tid, ok := a.idOf(t.Task); ok {
				key = tid
			}
		}
		switch {
		case msg != "":
			errs.addGone(key, "%s", msg)
		case jobs[0].state().Terminal():
			errs.addGone(key, "job %s already finished (%s)", t, jobs[0].state())
		case !mine(&jobs[0].rec.Job):
			errs.add(key, "job %s belongs to %s", t, jobs[0].rec.Job.User)
		case !matches(&jobs[0].rec.Job):
			errs.add(key, "job %s does not match the given filters", t)
		default:
			targets = append(targets, jobs[0])
		}
	}
	if len(req.IDs) == 0 && len(req.Tasks) == 0 {
		for _, a := range q.arrays {
			if !remMatches(a) {
				continue
			}
			if !mine(a.remJob()) {
				if otherUser {
					errs.add(a.base, "job %d belongs to %s", a.base, a.remJob().User)
				}
				continue
			}
			rems = appendRemEnded(rems, a, now)
		}
	}
	return plain, targets, rems
}

// appendRemEnded adds the cancel of a's pending remainder to rems.
func appendRemEnded(rems []remChange, a *arrayJob, now time.Time) []remChange {
	r, err := remEnded(a, lifecycle.Event{Kind: lifecycle.Cancel}, now)
	if err != nil { // remainders are matched pending: not reached
		return rems
	}
	return append(rems, r)
}

// uniqueJobs drops repeats (a job named twice, a task named by its array
// and by itself), keeping the first.
func uniqueJobs(jobs []*job) []*job {
	seen := make(map[uint64]bool, len(jobs))
	return slices.DeleteFunc(jobs, func(j *job) bool {
		id := j.rec.Job.ID
		dup := seen[id]
		seen[id] = true
		return dup
	})
}
