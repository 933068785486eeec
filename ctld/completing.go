package ctld

import (
	"iter"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sched"
)

// A job's parts outlive its end. A job of several nodes ends when its
// batch part does (or is cancelled, or its node fails), and ctld then
// stops its other parts, each on its own node (jobparts.go); a node
// frees a part's cores and GPUs only once the part's processes are gone,
// and then reports its end. Until a node says so (that end report, or a
// heartbeat that no longer lists the job), the job is COMPLETING there,
// Slurm's CG: the part's share of the node stays allocated in every plan
// and every start, so no job is launched onto cores the node still uses
// (the node would refuse the launch, and a refused launch takes the node
// DOWN), and listings show the job CG.
//
// The same holds for any finished job a node keeps listing well after
// its end (lostGrace): one cancelled while its node was away, or every
// job still stopping when the controller restarted. Nothing here is
// stored: heartbeats rebuild it. A node that goes DOWN holds nothing for
// the planner, so its parts are forgotten; if it comes back still
// running one, its heartbeat holds it again.
//
// Only finished jobs complete. A requeued job's earlier run on a node
// keeps the job itself off that node (nodeRegistry.oldRunMayLive), not
// other jobs.

// holdParts makes j, which has just finished, COMPLETING on nodes, but
// for those whose part ended already.
func (q *queue) holdParts(j *job, nodes []string) {
	for _, n := range nodes {
		if !slices.Contains(j.endedEarly, n) {
			q.holdPart(j, n)
		}
	}
	j.endedEarly = nil
}

// partEndedEarly notes a node's end report for a part of running job j
// that did not end the job (one at the time limit, which the batch
// part's own report is about to end): the part is gone, and the job
// will not be COMPLETING there. A report from a run before j's present
// one notes nothing.
func (q *queue) partEndedEarly(j *job, node string, at time.Time) {
	if st := j.rec.Job.StartTime; st != nil && !at.IsZero() && at.Before(*st) {
		return
	}
	if !slices.Contains(j.endedEarly, node) {
		j.endedEarly = append(j.endedEarly, node)
	}
}

// holdPart makes finished job j COMPLETING on node.
func (q *queue) holdPart(j *job, node string) {
	if !j.state().Terminal() || slices.Contains(j.completingOn, node) {
		return
	}
	if q.completing == nil {
		q.completing = make(map[uint64]*job)
	}
	j.completingOn = append(j.completingOn, node)
	q.completing[j.rec.Job.ID] = j
	j.rec.Job.Completing = true // a flag for views, under the write lock; never stored
}

// partGone records that j's part on node is gone; it reports whether
// that freed anything.
func (q *queue) partGone(j *job, node string) bool {
	i := slices.Index(j.completingOn, node)
	if i < 0 {
		return false
	}
	j.completingOn = slices.Delete(j.completingOn, i, i+1)
	if len(j.completingOn) == 0 {
		q.completed(j)
	}
	return true
}

// completed ends j's COMPLETING on every node.
func (q *queue) completed(j *job) {
	j.completingOn = nil
	j.rec.Job.Completing = false
	delete(q.completing, j.rec.Job.ID)
}

// partsGoneOn forgets every part held on the nodes in gone (DOWN now).
func (q *queue) partsGoneOn(gone map[string]bool) {
	for _, j := range q.completing {
		for _, n := range slices.Clone(j.completingOn) {
			if gone[n] {
				q.partGone(j, n)
			}
		}
	}
}

// completingJobs yields the jobs that are COMPLETING somewhere.
func (q *queue) completingJobs() iter.Seq2[uint64, *job] { return eachOf(q.completing) }

// partsEnded applies the end reports among events to the jobs they leave
// finished, the one that ended a job included: each says its node's part
// is gone. It reports whether that freed anything.
func (q *queue) partsEnded(events []api.JobEvent) (freed bool) {
	for _, ev := range events {
		if ev.Kind != api.EventEnded {
			continue
		}
		if j := q.jobs[ev.JobID]; j != nil && j.state().Terminal() && q.partEnded(j, ev.Node, ev.Time) {
			freed = true
		}
	}
	return freed
}

// partEnded applies a node's end report for finished job j: its part
// there is gone, unless the report is from a run before j's last
// (ended before it started). It reports whether that freed anything.
func (q *queue) partEnded(j *job, node string, at time.Time) bool {
	if st := j.rec.Job.StartTime; st != nil && !at.IsZero() && at.Before(*st) {
		return false
	}
	return q.partGone(j, node)
}

// reconcileParts compares node's heartbeat (running: the jobs it lists)
// with what is COMPLETING there: a finished job it still lists past
// grace after the job's end is held there; a completing one it no
// longer lists is gone, once grace has passed since the job started (a
// heartbeat built before the launch lists nothing). It reports whether
// anything was freed.
func (q *queue) reconcileParts(node string, running []uint64, now time.Time, grace time.Duration) (freed bool) {
	listed := make(map[uint64]bool, len(running))
	for _, id := range running {
		listed[id] = true
		j := q.jobs[id]
		if j != nil && j.state().Terminal() && j.runsOn(node) && j.rec.Job.EndTime != nil && now.Sub(*j.rec.Job.EndTime) > grace {
			q.holdPart(j, node)
		}
	}
	for id, j := range q.completing {
		if listed[id] || !slices.Contains(j.completingOn, node) {
			continue
		}
		if st := j.rec.Job.StartTime; st == nil || now.Sub(*st) > grace {
			freed = q.partGone(j, node) || freed
		}
	}
	return freed
}

// completingParts are the COMPLETING parts as the planner sees running
// jobs: each job's share on the nodes still stopping it, due to end by
// now (the planner counts an overdue job as ending just after now).
func (q *queue) completingParts(running []sched.Running) []sched.Running {
	for id, j := range q.completing {
		job := &j.rec.Job
		r := sched.Running{ID: id, Sharing: sharingOf(&job.Spec)}
		for _, n := range j.completingOn {
			r.Alloc = append(r.Alloc, sched.Allocation{Node: n, Resources: perNode(job)})
		}
		if job.EndTime != nil {
			r.End = *job.EndTime
		}
		addRunningGPUs(&r, job)
		running = append(running, r)
	}
	return running
}
