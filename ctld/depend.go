package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/jobspec"
)

// Dependencies are evaluated afresh in every scheduling cycle from the
// states of the jobs they name, so they follow requeues and restarts
// without state of their own. A condition on an array job (123) waits for
// every task of it; on a task (123_4), for that task.
//
//	after       every named job started (then Delay passed) or was cancelled before starting
//	afterany    every named job ended
//	afterok     every named job ended COMPLETED; never once one ended otherwise
//	afternotok  every named job ended and one not COMPLETED; never once all completed
//	aftercorr   the task of the named array with this task's index, as afterok
//	            (a job outside an array: the whole array, as afterok)
//	singleton   no job of this user and name runs, and none starts in the same cycle
//
// "," needs every condition, "?" any one. A job named in a condition that
// no longer exists (purged from the history) counts as satisfied.

// depState is a dependency's (or a condition's) standing.
type depState int

const (
	depWait  depState = iota // may still be satisfied
	depOK                    // satisfied
	depNever                 // can never be satisfied
)

// killOrder is a job whose dependency can never be satisfied, to be
// cancelled in apply; with array set, the whole remainder of that array.
type killOrder struct {
	id    uint64
	array *arrayJob
}

// targetSummary adds up the jobs one condition names.
type targetSummary struct {
	found                   bool
	total, ended, completed int
	// startedOrGone counts jobs that started (running or ended after
	// running) or ended without starting: what after waits for.
	startedOrGone int
	lastStart     time.Time
}

func (t *targetSummary) add(j *api.Job) {
	t.found = true
	t.total++
	if j.State.Terminal() {
		t.ended++
		if j.State == api.StateCompleted {
			t.completed++
		}
	}
	switch {
	case j.StartTime != nil:
		t.startedOrGone++
		if j.StartTime.After(t.lastStart) {
			t.lastStart = *j.StartTime
		}
	case j.State.Terminal():
		t.startedOrGone++
	}
}

// addRemainder adds n tasks that never had a job of their own.
func (t *targetSummary) addRemainder(n int, st api.JobState) {
	t.found = true
	t.total += n
	if st.Terminal() {
		t.ended += n
		t.startedOrGone += n
	}
}

func isSingleton(d *api.Dependency) bool  { return hasCondition(d, api.DependSingleton) }
func hasAfterCorr(d *api.Dependency) bool { return hasCondition(d, api.DependAfterCorr) }

func hasCondition(d *api.Dependency, typ api.DependencyType) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// checkDependencyTargets refuses, at submit, a dependency naming jobs
// this controller does not have (jobspec judges its shape).
func checkDependencyTargets(a *admission, spec *api.JobSpec) error {
	if spec.Dependency == nil {
		return nil
	}
	s := a.s
	bad := func(format string, args ...any) error {
		return invalid("invalid --dependency: "+format, args...)
	}
	for _, c := range spec.Dependency.Conditions {
		switch {
		case c.JobID == 0:
		case c.ArrayTask != nil:
			arr := s.q.array(c.JobID)
			if arr == nil {
				if s.q.job(c.JobID) != nil || s.q.arrayOf(c.JobID) != nil {
					return bad("job %d is not an array job, so %d_%d names nothing", c.JobID, c.JobID, *c.ArrayTask)
				}
				return bad("job %d does not exist", c.JobID)
			}
			if _, ok := arr.idOf(*c.ArrayTask); !ok {
				return bad("array job %d has no task %d", c.JobID, *c.ArrayTask)
			}
		case s.q.job(c.JobID) == nil && s.q.arrayOf(c.JobID) == nil:
			return bad("job %d does not exist", c.JobID)
		}
	}
	return nil
}

// killInvalidDepsLocked cancels the jobs the snapshot found with a
// dependency that can never be satisfied (and kill-on-invalid-dep),
// after checking again: the world may have changed since.
func (s *Server) killInvalidDepsLocked(kills []killOrder, now time.Time) {
	var changes []change
	var rems []remChange
	for _, k := range kills {
		if a := k.array; a != nil {
			r := a.pendingRem()
			if r == nil || s.q.array(a.base) != a || s.q.dependency(r, r.Spec.Dependency, nil, now, nil) != depNever {
				continue
			}
			if rc, err := remEnded(a, neverEvent(r), now); err == nil {
				rems = append(rems, rc)
			}
			continue
		}
		j := s.q.pendingJob(k.id)
		if j == nil || j.rec.Job.Spec.Dependency == nil ||
			s.q.dependency(&j.rec.Job, j.rec.Job.Spec.Dependency, j.rec.Job.ArrayTaskID, now, nil) != depNever {
			continue
		}
		if next, err := step(j.rec, neverEvent(&j.rec.Job), now); err == nil {
			changes = append(changes, change{j, next})
		}
	}
	if len(changes)+len(rems) == 0 {
		return
	}
	if err := s.q.commit(changes, rems); err != nil {
		s.log.Printf("cancelling %d jobs whose dependency can never be satisfied: %v", len(changes)+len(rems), err)
		return
	}
	for _, c := range changes {
		s.log.Printf("end job %s CANCELLED: %s", api.JobRefText(&c.next.Job), c.next.Job.Message)
	}
	for _, r := range rems {
		s.log.Printf("end array job %d pending tasks CANCELLED: %s", r.a.base, r.next.Job.Message)
	}
	s.Kick()
}

// neverEvent cancels job, whose dependency can never be satisfied.
func neverEvent(job *api.Job) lifecycle.Event {
	return lifecycle.Event{Kind: lifecycle.Cancel, Reason: api.ReasonDependencyNeverSatisfied,
		Message: "dependency " + jobspec.FormatDependency(job.Spec.Dependency) + " can never be satisfied"}
}

// summary adds up what a condition names: task of array id, the
// task with index corr (aftercorr), every task of array id, the single
// task whose own ID is id, or job id.
func (q *queue) summary(id uint64, task, corr *int) targetSummary {
	var t targetSummary
	a := q.arrays[id]
	if task == nil && corr != nil && a != nil {
		task = corr
	}
	switch {
	case task != nil:
		if a == nil {
			return t
		}
		if tid, ok := a.idOf(*task); ok {
			q.addTask(&t, a, tid, *task)
		}
	case a != nil:
		for pos := 0; pos < a.count; pos++ {
			if j := q.jobs[a.base+uint64(pos)]; j != nil {
				t.add(&j.rec.Job)
			}
		}
		if a.rem != nil {
			t.addRemainder(a.remCount, a.rem.Job.State)
		}
	default:
		if a := q.arrayOf(id); a != nil {
			index, _ := a.indexOf(id)
			q.addTask(&t, a, id, index)
		} else if j := q.jobs[id]; j != nil {
			t.add(&j.rec.Job)
		}
	}
	return t
}

func (q *queue) addTask(t *targetSummary, a *arrayJob, id uint64, index int) {
	if j := q.jobs[id]; j != nil {
		t.add(&j.rec.Job)
	} else if a.pendingIndex(index) {
		t.addRemainder(1, a.rem.Job.State)
	}
}

// dependedOn lists the jobs that pending jobs' dependencies name:
// they are kept past retention while anything waits on them.
func (q *queue) dependedOn() map[uint64]bool {
	out := make(map[uint64]bool)
	add := func(job *api.Job) {
		if job.State != api.StatePending || job.Spec.Dependency == nil {
			return
		}
		for _, c := range job.Spec.Dependency.Conditions {
			if c.JobID != 0 {
				out[c.JobID] = true
			}
		}
	}
	for _, j := range q.active {
		add(&j.rec.Job)
	}
	for _, a := range q.arrays {
		if r := a.remJob(); r != nil {
			add(r)
		}
	}
	return out
}

// runningNames counts running jobs by user and name, once a
// snapshot (every call without notes).
func (q *queue) runningNames(notes *cycleNotes) map[string]int {
	return notes.runningNamesOr(func() map[string]int {
		names := make(map[string]int)
		for _, j := range q.runningJobs() {
			names[j.rec.Job.User+"\x00"+j.rec.Job.Name]++
		}
		return names
	})
}

// dependency evaluates a job's dependency. task is the job's array
// index (aftercorr), nil outside arrays; wake times go to notes (nil:
// nowhere). The caller holds s.mu.
func (q *queue) dependency(job *api.Job, d *api.Dependency, task *int, now time.Time, notes *cycleNotes) depState {
	all, anyOK, never := true, false, 0
	for i := range d.Conditions {
		switch q.condition(job, &d.Conditions[i], task, now, notes) {
		case depOK:
			anyOK = true
		case depNever:
			never++
			all = false
		default:
			all = false
		}
	}
	switch {
	case d.Any && anyOK, !d.Any && all:
		return depOK
	case d.Any && never == len(d.Conditions), !d.Any && never > 0:
		return depNever
	}
	return depWait
}

func (q *queue) condition(job *api.Job, c *api.DependencyCondition, task *int, now time.Time, notes *cycleNotes) depState {
	if c.Type == api.DependSingleton {
		if q.runningNames(notes)[job.User+"\x00"+job.Name] > 0 {
			return depWait
		}
		return depOK
	}
	var corr *int
	if c.Type == api.DependAfterCorr {
		corr = task
	}
	t := q.summary(c.JobID, c.ArrayTask, corr)
	if !t.found {
		return depOK
	}
	switch c.Type {
	case api.DependAfter:
		if t.startedOrGone < t.total {
			return depWait
		}
		if at := t.lastStart.Add(time.Duration(c.Delay) * time.Second); c.Delay > 0 && now.Before(at) {
			notes.wakeAtLeast(at)
			return depWait
		}
		return depOK
	case api.DependAfterAny:
		if t.ended == t.total {
			return depOK
		}
	case api.DependAfterOK, api.DependAfterCorr:
		if t.ended > t.completed {
			return depNever
		}
		if t.completed == t.total {
			return depOK
		}
	case api.DependAfterNotOK:
		if t.ended < t.total {
			return depWait
		}
		if t.completed < t.total {
			return depOK
		}
		return depNever
	}
	return depWait
}

// blocked is why a pending job may not start now, "" if nothing stops
// it: a hold, a begin time still ahead, or its dependency. task is the
// job's array index (for aftercorr), nil outside arrays. Wake times go
// to notes (nil: nowhere). The caller holds Server.mu.
func (q *queue) blocked(job *api.Job, task *int, now time.Time, notes *cycleNotes) api.Reason {
	if r := heldOrEarly(job, now); r != "" {
		if r == api.ReasonBeginTime {
			notes.wakeAtLeast(*job.Spec.Begin)
		}
		return r
	}
	if d := job.Spec.Dependency; d != nil {
		switch q.dependency(job, d, task, now, notes) {
		case depWait:
			return api.ReasonDependency
		case depNever:
			return api.ReasonDependencyNeverSatisfied
		}
	}
	return ""
}

// heldOrEarly is the cheap part of queue.blocked: hold and begin time.
func heldOrEarly(job *api.Job, now time.Time) api.Reason {
	switch job.Hold {
	case lifecycle.HoldAdmin:
		return api.ReasonJobHeldAdmin
	case lifecycle.HoldUser:
		return api.ReasonJobHeld
	}
	if b := job.Spec.Begin; b != nil && now.Before(*b) {
		return api.ReasonBeginTime
	}
	return ""
}
