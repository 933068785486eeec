package ctld

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// The queue's side of the store: it loads the jobs and arrays, gives new
// ones their IDs, and commits changes, each on disk before it is
// installed in memory, so a kill -9 at any moment loses nothing that was
// acknowledged. Array remainders are written here and nowhere else.

// load fills the queue from the store: the jobs, then the arrays from
// their remainders and their tasks' jobs.
func (q *queue) load() error {
	recs, err := q.store.Jobs()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		j := &job{rec: *rec}
		if by := rec.CancelRequestedBy; by != nil && !rec.Job.State.Terminal() {
			// A cancel that reached the node before a restart: its end is
			// still the cancel's, by that uid.
			j.cancelRequested, j.cancelBy = true, by
		}
		q.track(j)
	}
	rems, err := q.store.Arrays()
	if err != nil {
		return err
	}
	for _, rec := range rems {
		if rec.Job.Spec.Array == nil {
			return fmt.Errorf("array job %d in the state file has no --array spec", rec.Job.ID)
		}
		a := newArrayJob(rec.Job.ID, rec.Job.Spec.Array)
		a.rem, a.remCount = rec, countRanges(rec.Pending)
		q.addArray(a)
	}
	for _, j := range q.jobs {
		job := &j.rec.Job
		if job.ArrayJobID == 0 || job.Spec.Array == nil {
			continue
		}
		a := q.arrays[job.ArrayJobID]
		if a == nil {
			a = newArrayJob(job.ArrayJobID, job.Spec.Array)
			q.addArray(a)
		}
		if !job.State.Terminal() {
			a.live++
		}
	}
	return q.loadSteps(time.Now())
}

// submit stores a checked job and only then, under mu (the Server's, not
// held by the caller), makes it visible. An array job is stored as its
// remainder, one record however many tasks, and reserves an ID for each.
// The returned ID is the job's, or the array's (its first task's).
func (q *queue) submit(rec *store.JobRecord, mu sync.Locker) (uint64, error) {
	spec := &rec.Job.Spec
	if spec.Array == nil {
		id, err := q.store.AddJob(rec)
		if err != nil {
			return 0, err
		}
		j := &job{rec: *rec}
		mu.Lock()
		q.track(j)
		mu.Unlock()
		return id, nil
	}
	arr := &store.ArrayRecord{Job: rec.Job, Home: rec.Home, Tasks: countRanges(spec.Array.Ranges),
		Pending: slices.Clone(spec.Array.Ranges)}
	base, err := q.store.AddArray(arr)
	if err != nil {
		return 0, err
	}
	a := newArrayJob(base, spec.Array)
	a.rem, a.remCount = arr, a.count
	mu.Lock()
	q.addArray(a)
	mu.Unlock()
	return base, nil
}

// commit persists the changes, the remainder changes rems and the step
// records steps in one transaction, together with the remainders that
// tasks in changes leave and the ends of the running steps of jobs that
// stop running, and, only once they are on disk, installs them: q.observe
// sees each change first. On error nothing changes. When a job or an
// array's pending tasks ended, q.ended is called once; when jobs of
// several nodes stopped running, q.stopped is called with them; then
// q.committed, once. The caller holds Server.mu for writing.
func (q *queue) commit(changes []change, rems []remChange, steps ...*store.StepRecord) error {
	if len(changes) == 0 && len(rems) == 0 && len(steps) == 0 {
		return nil
	}
	recs := make([]*store.JobRecord, len(changes))
	for i := range changes {
		recordCanceller(&changes[i])
		recs[i] = &changes[i].next
	}
	rems = q.remaindersAfter(changes, rems)
	now := time.Now()
	steps = stepsEnding(changes, steps, now)
	if err := q.persist(recs, rems, steps); err != nil {
		return err
	}
	q.installSteps(steps)
	stopped := stoppedParts(changes, now)
	ended := false
	for _, c := range changes {
		q.observe(c)
		q.trackLive(c)
		c.j.fromArray = nil
		c.j.rec = c.next
		q.track(c.j)
		q.noteCompleting(c.j)
		if c.next.Job.State.Terminal() {
			ended = true
			c.j.cancelRequested, c.j.cancelBy = false, nil
			c.j.launch = launchState{seq: c.j.launch.seq}
		}
	}
	for _, r := range rems {
		r.a.rem, r.a.remCount = r.next, 0
		if r.next != nil {
			r.a.remCount = countRanges(r.next.Pending)
		}
		if r.next == nil || r.next.Job.State.Terminal() {
			ended = true
		}
	}
	if ended {
		q.ended()
	}
	for _, sj := range stopped {
		if j := q.jobs[sj.id]; j != nil {
			q.holdParts(j, sj.run, sj.nodes, sj.end) // COMPLETING until their nodes report
		}
	}
	if len(stopped) > 0 && q.stopped != nil {
		q.stopped(stopped)
	}
	if q.committed != nil {
		q.committed()
	}
	return nil
}

// persist writes a commit: job records alone in the common case, with
// array remainders and step records when any changed.
func (q *queue) persist(recs []*store.JobRecord, rems []remChange, steps []*store.StepRecord) error {
	if len(rems) == 0 && len(steps) == 0 {
		return q.store.PutJobs(recs...)
	}
	u := store.Update{Jobs: recs, Steps: steps}
	for _, r := range rems {
		if r.next == nil {
			u.DeleteArrays = append(u.DeleteArrays, r.a.base)
		} else {
			u.Arrays = append(u.Arrays, r.next)
		}
	}
	return q.store.Apply(u)
}

// trackLive keeps arrayJob.live, the count of an array's unfinished
// tasks with a job of their own, right before c is installed.
func (q *queue) trackLive(c change) {
	old, next := &c.j.rec.Job, &c.next.Job
	a := q.arrays[next.ArrayJobID]
	if a == nil || next.ArrayJobID == 0 {
		return
	}
	if c.j.fromArray == nil && !old.State.Terminal() {
		a.live--
	}
	if !next.State.Terminal() {
		a.live++
	}
}

// purge deletes the finished jobs and array remainders that old says are
// past retention, but none that keep names (by job or array ID), from the
// store and then from memory; arrays left with nothing go too.
func (q *queue) purge(old func(*api.Job) bool, keep map[uint64]bool) (jobs, remainders int, err error) {
	var u store.Update
	for id, j := range q.jobs {
		if job := &j.rec.Job; old(job) && !keep[id] && !keep[job.ArrayJobID] {
			u.DeleteJobs = append(u.DeleteJobs, id)
		}
	}
	var rems []*arrayJob
	for _, a := range q.arrays {
		if a.rem != nil && old(&a.rem.Job) && !keep[a.base] {
			rems = append(rems, a)
			u.DeleteArrays = append(u.DeleteArrays, a.base)
		}
	}
	if len(u.DeleteJobs)+len(u.DeleteArrays) == 0 {
		return 0, 0, nil
	}
	if err := q.store.Apply(u); err != nil {
		return 0, 0, err
	}
	for _, id := range u.DeleteJobs {
		q.drop(id)
	}
	for _, a := range rems {
		a.rem, a.remCount = nil, 0
	}
	for base, a := range q.arrays {
		if a.rem == nil && a.live == 0 && !q.anyTask(a) {
			q.removeArray(base)
		}
	}
	return len(u.DeleteJobs), len(u.DeleteArrays), nil
}
