package ctld

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/sched"
)

// queue is every job the controller knows: plain jobs, array tasks with a
// job of their own, and arrays whose tasks not yet started wait in one
// pending remainder (store.ArrayRecord). Everything outside the queue asks
// it by reference (resolve, view) or walks it (each); how an array is kept
// stays in here. It is guarded by Server.mu: read for lookups and views,
// write for anything that changes it.
//
// It is a type of package ctld and not a package of its own because the
// job values it holds carry the launch and cancel state that the rest of
// ctld owns; it never reaches the Server, so moving it out is mechanical
// once that state leaves job.
type queue struct {
	jobs   map[uint64]*job // every job, finished ones too
	active map[uint64]*job // PENDING and RUNNING only
	// running is RUNNING only: every cycle charges them, and walking
	// them alone keeps a long pending queue off that step.
	running map[uint64]*job
	// pending is the PENDING jobs in ID order.
	pendingByID pendingOrder
	// owners counts the pending jobs of each owner (queueowners.go).
	owners ownerCounts
	// byState lists the jobs by owner and state (queuebystate.go).
	byState stateIndex
	arrays  map[uint64]*arrayJob
	bases   []uint64 // array job IDs, ascending, for finding a task's array
	// closing is the jobs that ended with steps still waiting for their
	// nodes' reports (stepcommit.go).
	closing map[uint64]*job
	// stopping is the parts of jobs' runs being stopped, completing the
	// jobs that have any (completing.go).
	stopping   map[partKey]*stoppingPart
	completing map[uint64]*job

	store *store.Store // where commit writes
	// observe sees every change once it is on disk, before it is
	// installed: the Server's bookkeeping that follows jobs.
	observe func(change)
	// ended is called after a commit that ended a job or an array's
	// pending tasks: it wakes those waiting for an end.
	ended func()
	// stopped is called after a commit that took jobs of several nodes
	// out of RUNNING, with their nodes: their parts are to be stopped.
	stopped func([]stoppedJob)
	// committed is called once after every commit, however many jobs it
	// changed: a cycle starting 1,000 jobs tells the dashboard once.
	committed func()
}

func newQueue() *queue {
	return &queue{jobs: make(map[uint64]*job), active: make(map[uint64]*job), running: make(map[uint64]*job),
		arrays: make(map[uint64]*arrayJob)}
}

// track files job j, whose record is installed, by its state: every job
// is in jobs, an unfinished one in active, a running one in running.
func (q *queue) track(j *job) {
	id := j.rec.Job.ID
	q.jobs[id] = j
	q.owners.note(j)
	q.byState.note(j)
	switch st := j.rec.Job.State; {
	case st.Terminal():
		delete(q.active, id)
		delete(q.running, id)
		q.pendingByID.left(j)
	case st.Holds(): // a suspended job keeps its nodes
		q.active[id], q.running[id] = j, j
		q.pendingByID.left(j)
	default:
		q.active[id] = j
		delete(q.running, id)
		q.pendingByID.pending(j)
	}
	if j.rec.Job.State == api.StatePending {
		j.endedEarly = nil // requeued: the run it was about is over (a finished job's, holdParts clears)
	}
}

// drop takes a finished job out of the queue (the history's purge).
func (q *queue) drop(id uint64) {
	if j := q.jobs[id]; j != nil {
		q.byState.forget(j)
		delete(q.jobs, id)
		delete(q.closing, id)
		for k := range q.stoppingParts() {
			if k.id == id {
				q.partGone(k.id, k.node)
			}
		}
	}
}

// Outside the queue's own methods, nothing reads its maps: these are the
// ways in, so that how jobs and arrays are kept can change here alone.

// job is the job with this ID that has a record of its own, nil if none.
func (q *queue) job(id uint64) *job { return q.jobs[id] }

// unfinishedJob is job(id) while it is pending or running, nil otherwise.
func (q *queue) unfinishedJob(id uint64) *job { return q.active[id] }

// array is the array job with this ID, nil if none.
func (q *queue) array(id uint64) *arrayJob { return q.arrays[id] }

func (q *queue) hasArrays() bool { return len(q.arrays) > 0 }

// size is how many jobs have a record of their own, and how many of them
// are pending or running.
func (q *queue) size() (jobs, unfinished int) { return len(q.jobs), len(q.active) }

// all yields every job with a record of its own, finished ones too, in
// no particular order.
func (q *queue) all() iter.Seq2[uint64, *job] { return eachOf(q.jobs) }

// unfinished yields the pending and running jobs with a record of their
// own, in no particular order.
func (q *queue) unfinished() iter.Seq2[uint64, *job] { return eachOf(q.active) }

// runningJobs yields the running jobs, in no particular order.
func (q *queue) runningJobs() iter.Seq2[uint64, *job] { return eachOf(q.running) }

func eachOf[V any](m map[uint64]V) iter.Seq2[uint64, V] {
	return func(yield func(uint64, V) bool) {
		for id, v := range m {
			if !yield(id, v) {
				return
			}
		}
	}
}

// eachArray yields every array job in no particular order; inOrder
// yields them by ascending ID.
func (q *queue) eachArray() iter.Seq2[uint64, *arrayJob] { return eachOf(q.arrays) }

func (q *queue) arraysInOrder() iter.Seq[*arrayJob] {
	return func(yield func(*arrayJob) bool) {
		for _, base := range q.bases {
			if !yield(q.arrays[base]) {
				return
			}
		}
	}
}

// records yields the records' jobs of all (or of unfinished).
func records(seq iter.Seq2[uint64, *job]) iter.Seq[*api.Job] {
	return func(yield func(*api.Job) bool) {
		for _, j := range seq {
			if !yield(&j.rec.Job) {
				return
			}
		}
	}
}

// pending yields every pending job, an array's pending tasks as one (its
// remainder's job).
func (q *queue) pending() iter.Seq[*api.Job] {
	return func(yield func(*api.Job) bool) {
		for j := range q.pendingByID.each {
			if !yield(&j.rec.Job) {
				return
			}
		}
		for _, a := range q.arrays {
			if r := a.pendingRem(); r != nil && !yield(r) {
				return
			}
		}
	}
}

func (q *queue) addArray(a *arrayJob) {
	q.arrays[a.base] = a
	i, _ := slices.BinarySearch(q.bases, a.base)
	q.bases = slices.Insert(q.bases, i, a.base)
}

func (q *queue) removeArray(base uint64) {
	delete(q.arrays, base)
	if i, ok := slices.BinarySearch(q.bases, base); ok {
		q.bases = slices.Delete(q.bases, i, i+1)
	}
}

// arrayOf is the array whose tasks include job ID id, nil if none.
func (q *queue) arrayOf(id uint64) *arrayJob {
	i := sort.Search(len(q.bases), func(i int) bool { return q.bases[i] > id }) - 1
	if i < 0 {
		return nil
	}
	a := q.arrays[q.bases[i]]
	if id >= a.base+uint64(a.count) {
		return nil
	}
	return a
}

// resolve finds what a reference names: jobs (a task that had no
// job of its own gets one, installed by the commit that changes it) and,
// for an array job, its pending remainder.
func (q *queue) resolve(ref jobRef) (jobs []*job, rem *arrayJob, msg string) {
	id, task := ref.id, ref.task
	if task == nil {
		if a := q.arrays[id]; a != nil {
			for pos := 0; pos < a.count; pos++ {
				if j := q.jobs[a.base+uint64(pos)]; j != nil {
					jobs = append(jobs, j)
				}
			}
			return jobs, a, ""
		}
		if a := q.arrayOf(id); a != nil {
			index, _ := a.indexOf(id)
			id, task = a.base, &index
		} else if j := q.jobs[id]; j != nil {
			return []*job{j}, nil, ""
		} else {
			return nil, nil, fmt.Sprintf("job %d does not exist", id)
		}
	}
	a := q.arrays[id]
	if a == nil {
		if q.jobs[id] != nil {
			return nil, nil, fmt.Sprintf("job %d is not an array job", id)
		}
		return nil, nil, fmt.Sprintf("job %d does not exist", id)
	}
	tid, ok := a.idOf(*task)
	if !ok {
		return nil, nil, fmt.Sprintf("array job %d has no task %d", id, *task)
	}
	if j := q.jobs[tid]; j != nil {
		return []*job{j}, nil, ""
	}
	if a.pendingIndex(*task) && a.rem.Job.State == api.StatePending {
		return []*job{q.materialise(a, *task)}, nil, ""
	}
	if a.pendingIndex(*task) {
		return nil, nil, fmt.Sprintf("job %s already finished (%s)", ref, a.rem.Job.State)
	}
	return nil, nil, fmt.Sprintf("job %s is no longer in the history", ref)
}

// view is the job a reference names: a job, or a task that has
// no job of its own yet as it would run. msg says why there is none.
func (q *queue) view(ref jobRef) (api.Job, string) {
	id, task := ref.id, ref.task
	if task == nil {
		if j := q.jobs[id]; j != nil {
			return j.rec.Job, ""
		}
		a := q.arrayOf(id)
		if a == nil {
			return api.Job{}, fmt.Sprintf("job %d does not exist", id)
		}
		index, _ := a.indexOf(id)
		id, task = a.base, &index
	}
	a := q.arrays[id]
	if a == nil {
		if q.jobs[id] != nil {
			return api.Job{}, fmt.Sprintf("job %d is not an array job", id)
		}
		return api.Job{}, fmt.Sprintf("job %d does not exist", id)
	}
	tid, ok := a.idOf(*task)
	if !ok {
		return api.Job{}, fmt.Sprintf("array job %d has no task %d", id, *task)
	}
	if j := q.jobs[tid]; j != nil {
		return j.rec.Job, ""
	}
	if a.pendingIndex(*task) {
		return taskView(a, *task), ""
	}
	return api.Job{}, fmt.Sprintf("job %s is no longer in the history", describeRef(id, task))
}

// materialise gives the pending task index of a its own job, not yet
// installed: the commit that carries its first change installs it and
// takes it out of the remainder.
func (q *queue) materialise(a *arrayJob, index int) *job {
	id, _ := a.idOf(index)
	rec := store.JobRecord{Job: a.rem.Job, Home: a.rem.Home}
	rec.Job.ID, rec.Job.ArrayJobID, rec.Job.ArrayTaskID, rec.Job.ArrayTasks = id, a.base, &index, ""
	rec.Job.History = slices.Clone(a.rem.Job.History)
	rec.Job.PlannedStart, rec.Job.PlannedNodes = nil, nil
	return &job{rec: rec, fromArray: a}
}

// pendingJob is the pending job with this ID: one with a record of its
// own, or an array task still in its remainder, given a job that the
// commit carrying its first change installs. nil if there is none.
func (q *queue) pendingJob(id uint64) *job {
	if j := q.active[id]; j != nil {
		if j.state() != api.StatePending {
			return nil
		}
		return j
	}
	return q.pendingTask(id)
}

// pendingTask is the not yet materialised task with job ID id,
// materialised; nil unless it is pending in its array's remainder.
func (q *queue) pendingTask(id uint64) *job {
	if q.jobs[id] != nil {
		return nil
	}
	a := q.arrayOf(id)
	if a == nil || a.rem == nil || a.rem.Job.State != api.StatePending {
		return nil
	}
	index, _ := a.indexOf(id)
	if !a.pendingIndex(index) {
		return nil
	}
	return q.materialise(a, index)
}

func (q *queue) anyTask(a *arrayJob) bool {
	for pos := 0; pos < a.count; pos++ {
		if q.jobs[a.base+uint64(pos)] != nil {
			return true
		}
	}
	return false
}

// remaindersAfter adds to rems the remainders that changes take
// tasks out of (tasks getting their own job), merged with any explicit
// change of the same remainder.
func (q *queue) remaindersAfter(changes []change, rems []remChange) []remChange {
	taken := make(map[*arrayJob][]int)
	for _, c := range changes {
		if a := c.j.fromArray; a != nil {
			taken[a] = append(taken[a], *c.next.Job.ArrayTaskID)
		}
	}
	if len(taken) == 0 {
		return rems
	}
	out := slices.Clone(rems)
	for a, indexes := range taken {
		i := slices.IndexFunc(out, func(r remChange) bool { return r.a == a })
		base := a.rem
		if i >= 0 {
			base = out[i].next
		} else {
			out = append(out, remChange{a: a})
			i = len(out) - 1
		}
		if base == nil {
			continue
		}
		next := *base
		next.Pending = withoutIndexes(base.Pending, indexes)
		out[i].next = &next
		if len(next.Pending) == 0 {
			out[i].next = nil // every task has a job of its own now
		}
	}
	return out
}

// startCandidate is the job a plan's start names if it may still start:
// an active pending job, or an array task that then leaves its array's
// remainder with the start's commit, neither held nor early now (a hold
// or an update may have come after the snapshot). The limits the planner
// knows (%N, singleton, policies) are not checked again: only cycles
// start jobs, so nothing has started since the snapshot.
func (q *queue) startCandidate(id uint64, now time.Time) *job {
	j := q.pendingJob(id)
	if j == nil || heldOrEarly(&j.rec.Job, now) != "" {
		return nil
	}
	return j
}

// allocation is what running jobs hold on each node.
func (q *queue) allocation() map[string]sched.Resources {
	alloc := make(map[string]sched.Resources)
	for _, j := range q.running {
		for _, n := range j.rec.Job.Nodes {
			alloc[n] = alloc[n].Add(perNode(&j.rec.Job))
		}
	}
	for k, p := range q.stoppingParts() {
		alloc[k.node] = alloc[k.node].Add(perNode(p.run))
	}
	return alloc
}

// pendingKey reports whether id is a pending job or an array job
// with pending tasks in its remainder.
func (q *queue) pendingKey(id uint64) bool {
	if j := q.active[id]; j != nil && j.state() == api.StatePending {
		return true
	}
	return q.arrays[id].pendingRem() != nil
}

// attach gives a new queue its store and its observers: observe sees
// every change on its way in, ended is called when jobs end, stopped
// with the parts to stop of jobs that ended, committed once per commit.
func (q *queue) attach(st *store.Store, observe func(change), ended func(), stopped func([]stoppedJob), committed func()) {
	q.store, q.observe, q.ended, q.stopped, q.committed = st, observe, ended, stopped, committed
}
