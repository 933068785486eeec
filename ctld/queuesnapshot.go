package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sched"
)

// The queue's side of a scheduling snapshot: its running jobs as the
// planner sees them, and what the snapshot builder reads of its jobs and
// arrays. The caller holds Server.mu (read at least).

// runningAndPending is the running jobs as the planner sees them (with
// the parts of finished ones still stopping) and the pending ones' records in ID order, appended to pending (a reused
// buffer), to read only.
func (q *queue) runningAndPending(pending []*api.Job) ([]sched.Running, []*api.Job) {
	running := make([]sched.Running, 0, len(q.running))
	for id, j := range q.running {
		job := &j.rec.Job
		r := sched.Running{ID: id, Sharing: sharingOf(&job.Spec)}
		for _, n := range job.Nodes {
			r.Alloc = append(r.Alloc, sched.Allocation{Node: n, Resources: perNode(job)})
		}
		if job.StartTime != nil && job.TimeLimit > 0 && job.State == api.StateRunning {
			// Suspended time does not count; a suspended job's end is unknown.
			r.End = job.StartTime.Add(time.Duration(job.TimeLimit+job.SuspendedSecs) * time.Second)
		}
		addRunningGPUs(&r, job)
		running = append(running, r)
	}
	running = q.appendStopping(running)
	for j := range q.pendingByID.each {
		pending = append(pending, &j.rec.Job)
	}
	return running, pending
}

// unfinishedRecord is the record of job id while it is unfinished, else
// nil; to read only.
func (q *queue) unfinishedRecord(id uint64) *api.Job {
	if j := q.active[id]; j != nil {
		return &j.rec.Job
	}
	return nil
}

// runningPerArray counts the running tasks of each array.
func (q *queue) runningPerArray() map[uint64]int {
	running := make(map[uint64]int)
	for _, j := range q.running {
		if id := j.rec.Job.ArrayJobID; id != 0 {
			running[id]++
		}
	}
	return running
}

// id is the array's job ID.
func (a *arrayJob) id() uint64 { return a.base }

// limit is the array's %N: how many of its tasks may run at once (0: no limit).
func (a *arrayJob) limit() int { return a.maxRunning }

// remaining is how many tasks the pending remainder holds.
func (a *arrayJob) remaining() int { return a.remCount }
