package lifecycle

import (
	"fmt"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/gpu"
)

// Hold levels (api.Job.Hold): a user's hold, or an operator's, which
// only an operator releases.
const (
	HoldUser  = "user"
	HoldAdmin = "admin"
)

// MaxLaunchFailures is how many launches in a row may fail for node
// faults before the job is held (JobHeldAdmin, as Slurm's "launch failed
// requeued held"): each failure holds a node DOWN for a while, so one job
// must not bounce from node to node forever.
const MaxLaunchFailures = 3

// Event is what happened to a job, with what the event carries. Fields
// an event's kind does not use are ignored.
type Event struct {
	Kind Kind
	// At is when it happened, as a node reports it; zero: now.
	At time.Time
	// Start: where the job runs, and its GPU shares there.
	Nodes    []string
	GPUAlloc []api.NodeGPUs
	// End, Timeout, EndRequeue: the node's report.
	State        api.JobState
	ExitCode     int
	Signal       int
	PeakMemBytes int64
	CPUTimeUsec  int64
	// Reason stays on a cancelled job (DependencyNeverSatisfied); ""
	// is ReasonNone.
	Reason api.Reason
	// Message says why, for the job's (or its run's) Message; "" keeps
	// the message it has.
	Message string
	// ByOperator: a Hold or Release by an operator, administrator or root.
	ByOperator bool
}

// NodeEnd is the event of kind k (End, Timeout or EndRequeue) for a
// node's end report.
func NodeEnd(k Kind, ev api.JobEvent) Event {
	return Event{Kind: k, At: ev.Time, State: ev.State, ExitCode: ev.ExitCode, Signal: ev.Signal,
		PeakMemBytes: ev.PeakMemBytes, CPUTimeUsec: ev.CPUTimeUsec, Message: ev.Message}
}

// New is job as submitted at now, the first record every job starts
// from: PENDING, its history begun, held by its owner when held. job
// carries what the submit asked for; its state fields are replaced.
func New(job api.Job, held bool, now time.Time) api.Job {
	job.State, job.Reason, job.Hold = api.StatePending, api.ReasonNone, ""
	job.SubmitTime = now
	job.History = []api.Transition{{State: api.StatePending, Time: now}}
	if held {
		job.Hold, job.Reason = HoldUser, api.ReasonJobHeld
	}
	return job
}

// Next is job after ev, or why ev is refused in job's state. The result
// shares nothing mutable with job: readers may hold a copy of job.
func Next(job api.Job, ev Event, now time.Time) (api.Job, error) {
	allowed := Allowed(job.State, ev.Kind)
	if len(allowed) == 0 {
		return job, refusal(&job, ev.Kind)
	}
	at := now
	if !ev.At.IsZero() {
		at = ev.At
	}
	next := job
	switch ev.Kind {
	case Start:
		next = transition(job, api.StateRunning, api.ReasonNone, now)
		start := now
		next.StartTime = &start
		next.EndTime, next.ExitCode, next.CancelledBy = nil, nil, nil
		next.SuspendTime, next.SuspendedSecs = nil, 0
		next.Nodes = append([]string(nil), ev.Nodes...)
		next.GPUAlloc = ev.GPUAlloc
		next.Message = ""
	case Configuring:
		next = transition(job, api.StateRunning, api.ReasonImagePull, at)
	case Configured:
		next = transition(job, api.StateRunning, api.ReasonNone, at)
	case End:
		next = endedByNode(job, ev, at)
	case Timeout:
		ev.State = api.StateTimeout
		next = endedByNode(job, ev, at)
	case EndRequeue:
		end := endedByNode(job, ev, at)
		run := job
		run.EndTime, run.ExitCode, run.Signal = end.EndTime, end.ExitCode, end.Signal
		run.PeakMemBytes, run.CPUTimeUsec, run.Message = end.PeakMemBytes, end.CPUTimeUsec, end.Message
		next = requeued(run, api.StateRequeued, now, "")
	case Cancel:
		reason := ev.Reason
		if reason == "" {
			reason = api.ReasonNone
		}
		next = ended(job, api.StateCancelled, reason, now, ev.Message)
		next.ExitCode = nil
	case NodeFail:
		next = ended(job, api.StateNodeFail, api.ReasonNone, now, ev.Message)
		next.ExitCode = nil
	case NodeFailRequeue:
		next = requeued(job, api.StateNodeFail, now, ev.Message)
	case Requeue:
		runState := api.StateRequeued
		if job.State.Terminal() {
			runState = job.State // it ran to its end before the requeue
		}
		next = requeued(job, runState, now, ev.Message)
	case LaunchFailed:
		next = launchFailed(job, ev.Message, now)
	case LaunchRefused:
		next = ended(job, api.StateFailed, api.ReasonLaunchFailed, now, ev.Message)
	case Suspend:
		next = transition(job, api.StateSuspended, api.ReasonNone, now)
		next.SuspendTime = &now
	case Resume:
		next = transition(job, api.StateRunning, api.ReasonNone, now)
		next.SuspendedSecs += suspendedFor(&job, now)
		next.SuspendTime = &now
	case Hold, Release:
		var err error
		if next, err = holdOrRelease(job, ev); err != nil {
			return job, err
		}
	}
	if !slices.Contains(allowed, next.State) { // the table and the cases above disagree: a bug
		return job, fault.Errorf(fault.Internal, "job %s: %s from %s led to %s", api.JobRefText(&job), ev.Kind, job.State, next.State)
	}
	return next, nil
}

// refusal is why k is refused in job's state, in the words users see.
func refusal(job *api.Job, k Kind) error {
	ref := api.JobRefText(job)
	switch {
	case (k == Hold || k == Release) && !job.State.Terminal():
		return fault.Errorf(fault.Conflict, "job %s is not pending (%s)", ref, job.State)
	case k == Requeue && job.State == api.StatePending:
		return fault.Errorf(fault.Conflict, "job %s is pending: only running and finished jobs can be requeued", ref)
	case job.State.Terminal():
		return fault.Errorf(fault.Conflict, "job %s already finished (%s)", ref, job.State)
	}
	return fault.Errorf(fault.Conflict, "job %s is %s: no %s there", ref, job.State, k)
}

// transition is job in a new state, with the change appended to History.
// A planned start belongs to the state it was planned in.
func transition(job api.Job, st api.JobState, reason api.Reason, at time.Time) api.Job {
	next := job
	next.State, next.Reason = st, reason
	next.History = append(slices.Clip(job.History), api.Transition{State: st, Reason: reason, Time: at})
	next.PlannedStart, next.PlannedNodes = nil, nil
	return next
}

// ended is job ended in state st for reason at time at. A job its node
// ends keeps no reason; one the controller ends may (LaunchFailed).
func ended(job api.Job, st api.JobState, reason api.Reason, at time.Time, msg string) api.Job {
	next := transition(job, st, reason, at)
	next.SuspendedSecs += suspendedFor(&job, at)
	end := at
	next.EndTime = &end
	if msg != "" {
		next.Message = msg
	}
	return next
}

// endedByNode is job after its node reported its end at time at. A state
// no node may report is recorded as FAILED, saying so.
func endedByNode(job api.Job, ev Event, at time.Time) api.Job {
	st, msg := ev.State, ev.Message
	if !slices.Contains(nodeEndStates, st) {
		msg = "node reported end state " + string(st) + "; recorded as FAILED"
		if ev.Message != "" {
			msg += ": " + ev.Message
		}
		st = api.StateFailed
	}
	next := ended(job, st, api.ReasonNone, at, msg)
	code := ev.ExitCode
	next.ExitCode = &code
	next.Signal = ev.Signal
	next.PeakMemBytes = ev.PeakMemBytes
	next.CPUTimeUsec = ev.CPUTimeUsec
	return next
}

// suspendedFor is how long a suspended job has been suspended at time
// at; 0 for a job that is not.
func suspendedFor(job *api.Job, at time.Time) int64 {
	if job.State != api.StateSuspended || job.SuspendTime == nil || at.Before(*job.SuspendTime) {
		return 0
	}
	return int64(at.Sub(*job.SuspendTime) / time.Second)
}

// requeued is job back in PENDING. Its run (ended at its EndTime if it
// has one, else at) is kept in Runs as runState, and History shows the
// run's end when the job was still running.
func requeued(job api.Job, runState api.JobState, at time.Time, msg string) api.Job {
	end := at
	if job.EndTime != nil {
		end = *job.EndTime
	}
	run := api.JobRun{State: runState, EndTime: end, ExitCode: job.ExitCode, Signal: job.Signal, Nodes: job.Nodes,
		PeakMemBytes: job.PeakMemBytes, CPUTimeUsec: job.CPUTimeUsec, Message: job.Message}
	if len(job.GPUAlloc) > 0 {
		run.GPUs = gpu.Physical(&job, len(job.Nodes))
		run.GPUAlloc = job.GPUAlloc
	}
	if msg != "" {
		run.Message = msg
	}
	if job.StartTime != nil {
		run.StartTime = *job.StartTime
	}
	next := job
	if !job.State.Terminal() {
		next = transition(next, runState, api.ReasonNone, end)
	}
	next = transition(next, api.StatePending, api.ReasonNone, at)
	next.Runs = append(slices.Clip(job.Runs), run)
	next.Restarts++
	next.StartTime, next.EndTime, next.ExitCode, next.Nodes = nil, nil, nil, nil
	next.GPUAlloc = nil
	next.SuspendTime, next.SuspendedSecs = nil, 0
	next.Signal, next.PeakMemBytes, next.CPUTimeUsec, next.Message = 0, 0, 0, ""
	return next
}

// launchFailed is job back in PENDING after a launch that failed for the
// node's reasons, held once MaxLaunchFailures failed in a row.
func launchFailed(job api.Job, msg string, at time.Time) api.Job {
	next := transition(job, api.StatePending, api.ReasonLaunchFailed, at)
	next.StartTime, next.Nodes, next.GPUAlloc = nil, nil, nil
	if n := launchFailures(&next); n >= MaxLaunchFailures {
		msg = fmt.Sprintf("%s; held after %d failed launches in a row (an operator may release it)", msg, n)
		next = transition(next, api.StatePending, api.ReasonJobHeldAdmin, at)
		next.Hold = HoldAdmin
	}
	next.Message = msg
	return next
}

// launchFailures counts the job's launches that failed in a row, from
// its history: since its submit, requeue or release, every return to
// PENDING was a failed launch. Kept in the history, the count survives
// controller restarts.
func launchFailures(job *api.Job) int {
	n := 0
	for i := len(job.History) - 1; i >= 0; i-- {
		switch h := job.History[i]; {
		case h.State == api.StateRunning:
		case h.State == api.StatePending && h.Reason == api.ReasonLaunchFailed:
			n++
		default:
			return n
		}
	}
	return n
}

// holdOrRelease changes a job's hold. Neither is a state change: History
// does not show it, a pending job's reason does. A running (or
// suspended) job runs on; its hold keeps it waiting once it is requeued,
// as Slurm's scontrol hold of a running job does.
func holdOrRelease(job api.Job, ev Event) (api.Job, error) {
	ref := api.JobRefText(&job)
	pendingReason := func(r api.Reason) {
		if job.State == api.StatePending {
			job.Reason = r
		}
	}
	if ev.Kind == Hold {
		switch {
		case ev.ByOperator:
			job.Hold = HoldAdmin
			pendingReason(api.ReasonJobHeldAdmin)
		case job.Hold == HoldAdmin:
			return job, fault.Errorf(fault.Conflict, "job %s is already held by an operator or root", ref)
		default:
			job.Hold = HoldUser
			pendingReason(api.ReasonJobHeld)
		}
		return job, nil
	}
	switch {
	case job.Hold == "":
		return job, nil // as Slurm's: releasing a job not held does nothing, and is no error
	case job.Hold == HoldAdmin && !ev.ByOperator:
		return job, fault.Errorf(fault.Forbidden, "job %s was held by an operator or root; only an operator, administrator or root may release it", ref)
	}
	job.Hold = ""
	pendingReason(api.ReasonNone)
	return job, nil
}
