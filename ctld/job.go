package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/sched"
)

// job is the in-memory copy of one job. rec is replaced, never mutated in
// place, once it has been handed out: readers take a shallow copy of
// rec.Job under the read lock, so slices and pointers inside it must be
// fresh for every change (lifecycle.Next makes them so).
type job struct {
	// order is where it stands in the queue's pendingOrder; first, so a
	// cycle's walk of the pending jobs reads one cache line of each.
	order pendingMark
	rec   store.JobRecord
	// pendingAs is where the queue's ownerCounts counts it.
	pendingAs pendingCount
	// listed is where the queue's stateIndex lists it.
	listed stateMarks
	launch launchState
	// cancelRequested: a signal went to the node; its end will be CANCELLED.
	cancelRequested bool
	// cancelBy is the uid whose cancel is under way, recorded on the job
	// when it ends CANCELLED (queue.commit); nil: no one's.
	cancelBy *uint32
	// fromArray is set on an array task that is leaving its array's
	// pending remainder in the commit under way (queue.commit).
	fromArray *arrayJob
	// limitSignalled: the controller signalled the job at a time limit
	// lowered while it ran (enforceTimeLimits).
	limitSignalled bool
	// steps are its running steps and the last step ID.
	steps jobSteps
	// alloc follows an allocation job's client (JobSpec.Allocation).
	alloc allocClient
	// stoppingOn are the nodes where parts of it are being stopped;
	// endedEarly, those whose part of the present run ended while the job
	// still ran (completing.go).
	stoppingOn, endedEarly []string
}

// allocClient is what ctld knows of an allocation's client (salloc, or
// srun outside an allocation). It is not persisted: after a restart the
// client has a whole inactivity bound to renew again, and a release
// whose node had not reported yet ends CANCELLED.
type allocClient struct {
	seen time.Time // its last renewal; zero: not seen since submit or load
	// released: the client released the allocation with this exit code;
	// the node's end report then ends the job COMPLETED or FAILED.
	released *int
}

// launchState follows the launch of the job's current start. It is not
// persisted: after a restart nothing is known about launches, and lost-job
// detection falls back to the start time (see job.lost).
type launchState struct {
	seq      uint64    // bumped per start; a late result for an older start is ignored
	inFlight int       // launches (one per node) not answered yet
	ackedAt  time.Time // when the node accepted it (launch answer or started event)
}

func (j *job) state() api.JobState { return j.rec.Job.State }

// batchHost is the node that runs the job's script: the first allocated
// node, as in Slurm. Only it is sent the launch and reports the job.
func (j *job) batchHost() string {
	if len(j.rec.Job.Nodes) == 0 {
		return ""
	}
	return j.rec.Job.Nodes[0]
}

// step is rec after ev, as package lifecycle has it. A start or a
// requeue begins a new run: the record's per-run flags (a requeue asked
// for, a lowered limit to enforce) go with the old one.
func step(rec store.JobRecord, ev lifecycle.Event, now time.Time) (store.JobRecord, error) {
	job, err := lifecycle.Next(rec.Job, ev, now)
	if err != nil {
		return rec, err
	}
	next := rec
	next.Job = job
	backToAsked(&rec.Job, &next.Job)
	if ev.Kind == lifecycle.Start || ev.Kind.Requeues() {
		next.RequeueRequested, next.EnforceTimeLimit = false, false
	}
	if ev.Kind == lifecycle.Start || ev.Kind.Requeues() || next.Job.State.Terminal() {
		next.CancelRequestedBy = nil
	}
	return next, nil
}

// change is one job's next record, to be persisted before it is installed.
type change struct {
	j    *job
	next store.JobRecord
}

// perNode is what a job needs on each of its nodes; FGPU is what it holds
// (or asks for) per node.
func perNode(j *api.Job) sched.Resources {
	return sched.Resources{CPUs: j.CPUs, MemBytes: j.MemBytes, FGPU: jobFGPUPerNode(j)}
}

// jobs are the change's job as it is and as it will be.
func (c change) jobs() (old, next *api.Job) { return &c.j.rec.Job, &c.next.Job }
