package ctld

import (
	"iter"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/sched"
)

// A job's parts outlive its run. A run of several nodes ends when its
// batch part does (or is cancelled, requeued, or its node fails), and ctld
// then stops its other parts, each on its own node (jobparts.go); a node
// frees a part's cores and GPUs only once the part's processes are gone,
// and then reports its end. Until a node says so (that end report, or a
// heartbeat that no longer lists the job), the part is stopping there and
// its job COMPLETING, Slurm's CG: the part's share of the node stays
// allocated in every plan and every start, so no job is launched onto
// cores the node still uses (the node would refuse the launch, and a
// refused launch takes the node DOWN), and listings show the job CG.
//
// A part is kept with the record of the run it belongs to, so a requeued
// job's old parts hold their nodes while the job waits or runs again
// elsewhere (its old nodes also keep the job itself off them until they
// stop listing it: nodeRegistry.oldRunMayLive).
//
// The same holds for a finished job a node lists when it comes up (every
// job still stopping when the controller restarted, one cancelled while
// its node was away) or keeps listing well after its end (lostGrace).
// Nothing here is stored: registrations rebuild it. A node that goes DOWN
// holds nothing for the planner, so its parts are forgotten; if it comes
// back still running one, its registration holds it again.

// partKey names one job's part on one node.
type partKey struct {
	id   uint64
	node string
}

// stoppingPart is a part being stopped: what it holds comes from the
// record of its run, kept as it was (records are never changed in place).
type stoppingPart struct {
	j   *job
	run *api.Job
	// end is when its run ended, the planner's expected release (overdue,
	// so just after now); start is when the run started.
	end, start time.Time
}

// holdParts keeps the parts on nodes of run, the record of j's run that
// a commit just ended or requeued, stopping, but for those whose part
// ended already.
func (q *queue) holdParts(j *job, run *api.Job, nodes []string, end time.Time) {
	for _, n := range nodes {
		if !slices.Contains(j.endedEarly, n) {
			q.holdPart(j, run, n, end)
		}
	}
	j.endedEarly = nil
}

// holdPart keeps j's part on node, of run, stopping.
func (q *queue) holdPart(j *job, run *api.Job, node string, end time.Time) {
	k := partKey{run.ID, node}
	if q.stopping[k] != nil {
		return
	}
	if q.stopping == nil {
		q.stopping, q.completing = make(map[partKey]*stoppingPart), make(map[uint64]*job)
	}
	p := &stoppingPart{j: j, run: run, end: end}
	if run.StartTime != nil {
		p.start = *run.StartTime
	}
	q.stopping[k] = p
	j.stoppingOn = append(j.stoppingOn, node)
	q.completing[run.ID] = j
	q.noteCompleting(j)
}

// partGone records that j's part on node is gone; it reports whether
// that freed anything.
func (q *queue) partGone(id uint64, node string) bool {
	k := partKey{id, node}
	p := q.stopping[k]
	if p == nil {
		return false
	}
	delete(q.stopping, k)
	p.j.stoppingOn = slices.DeleteFunc(p.j.stoppingOn, func(n string) bool { return n == node })
	if len(p.j.stoppingOn) == 0 {
		p.j.stoppingOn = nil
		delete(q.completing, id)
	}
	q.noteCompleting(p.j)
	return true
}

// noteCompleting sets j's COMPLETING flag and the nodes still stopping
// it, for views: set under the write lock (a fresh slice each time, as
// readers may hold the old one) and never stored. A job is COMPLETING
// while parts of it stop and it does not run again yet.
func (q *queue) noteCompleting(j *job) {
	rec := &j.rec.Job
	rec.Completing = len(j.stoppingOn) > 0 && !j.state().Holds()
	rec.CompletingNodes = nil
	if rec.Completing {
		rec.CompletingNodes = slices.SortedFunc(slices.Values(j.stoppingOn), hostlist.Compare)
	}
}

// partEndedEarly notes a node's end report for a part of running job j
// that did not end the job (one at the time limit, which the batch
// part's own report is about to end): the part is gone, and will not be
// held. A report from a run before j's present one notes nothing.
func (q *queue) partEndedEarly(j *job, node string, at time.Time) {
	if st := j.rec.Job.StartTime; st != nil && !at.IsZero() && at.Before(*st) {
		return
	}
	if !slices.Contains(j.endedEarly, node) {
		j.endedEarly = append(j.endedEarly, node)
	}
}

// partsGoneOn forgets every part held on the nodes in gone (DOWN now).
func (q *queue) partsGoneOn(gone map[string]bool) {
	for k := range q.stopping {
		if gone[k.node] {
			q.partGone(k.id, k.node)
		}
	}
}

// partsEnded applies the end reports among events: each says its node's
// part of the job is gone, the report that ended or requeued the job
// included. A report from before the part's run started is an older
// run's. It reports whether that freed anything.
func (q *queue) partsEnded(events []api.JobEvent) (freed bool) {
	for _, ev := range events {
		if ev.Kind != api.EventEnded {
			continue
		}
		p := q.stopping[partKey{ev.JobID, ev.Node}]
		if p != nil && (ev.Time.IsZero() || !ev.Time.Before(p.start)) && q.partGone(ev.JobID, ev.Node) {
			freed = true
		}
	}
	return freed
}

// reconcileParts compares node's heartbeat (running: the jobs it lists)
// with the parts stopping there. A job it still lists whose last run on
// it has ended (finished, or requeued since) is held there if the node
// just came up (after a controller restart, or back from DOWN) or grace
// has passed since that run's end: a heartbeat built just before ctld
// acknowledged the end may still list it, and the part is gone. A
// stopping part it no longer lists is gone, once grace has passed since
// its run started (a heartbeat built before the launch lists nothing).
// It reports whether anything was freed.
func (q *queue) reconcileParts(node string, running []uint64, cameUp bool, now time.Time, grace time.Duration) (freed bool) {
	for _, id := range running {
		j := q.jobs[id]
		if j == nil || j.state().Holds() {
			continue
		}
		if run, ok := endedRunOn(j, node); ok && (cameUp || now.Sub(*run.EndTime) > grace) {
			q.holdPart(j, run, node, *run.EndTime)
		}
	}
	if len(q.stopping) == 0 { // every heartbeat comes here: most find nothing stopping
		return false
	}
	listed := make(map[uint64]bool, len(running))
	for _, id := range running {
		listed[id] = true
	}
	for k, p := range q.stopping {
		if k.node == node && !listed[k.id] && now.Sub(p.start) > grace {
			freed = q.partGone(k.id, k.node) || freed
		}
	}
	return freed
}

// endedRunOn is the record of j's last run, which ran on node and has
// ended: the job's own record when it finished, else (requeued since)
// that run's as it was. ok is false when there is none.
func endedRunOn(j *job, node string) (run *api.Job, ok bool) {
	rec := j.rec.Job // a copy: the part keeps it
	if !rec.State.Terminal() {
		if len(rec.Runs) == 0 {
			return nil, false
		}
		last := rec.Runs[len(rec.Runs)-1]
		rec.Nodes, rec.StartTime, rec.EndTime, rec.GPUAlloc = last.Nodes, &last.StartTime, &last.EndTime, last.GPUAlloc
	}
	if rec.EndTime == nil || !slices.Contains(rec.Nodes, node) {
		return nil, false
	}
	return &rec, true
}

// isStopping reports whether job id's part on node is being stopped.
func (q *queue) isStopping(id uint64, node string) bool { return q.stopping[partKey{id, node}] != nil }

// stoppingParts yields the parts being stopped.
func (q *queue) stoppingParts() iter.Seq2[partKey, *stoppingPart] {
	return func(yield func(partKey, *stoppingPart) bool) {
		for k, p := range q.stopping {
			if !yield(k, p) {
				return
			}
		}
	}
}

// appendStopping adds the stopping parts to the planner's running jobs:
// each its run's share on its node, due to end by now (the planner
// counts an overdue job as ending just after now).
func (q *queue) appendStopping(running []sched.Running) []sched.Running {
	for k, p := range q.stopping {
		r := sched.Running{ID: k.id, End: p.end, Sharing: sharingOf(&p.run.Spec),
			Alloc: []sched.Allocation{{Node: k.node, Resources: perNode(p.run)}}}
		addRunningGPUs(&r, p.run)
		running = append(running, r)
	}
	return running
}

// heldGPUs is what part p holds of node's devices.
func (p *stoppingPart) heldGPUs(node string) []gpu.Holding {
	var out []gpu.Holding
	for _, sh := range sharesOn(p.run, node) {
		out = append(out, gpu.Holding{UID: p.run.UID, Share: sh})
	}
	return out
}

// gpuDevices are the devices part p holds on node.
func (p *stoppingPart) gpuDevices(node string) []int {
	var out []int
	for _, a := range p.run.GPUAlloc {
		if a.Node == node {
			for _, sh := range a.Shares {
				out = append(out, sh.Device)
			}
		}
	}
	return out
}
