package noded

import (
	"time"

	"github.com/corral-hpc/corral/api"
)

// endedRunsKept bounds how many ended runs a node remembers. A repeated
// launch comes within a controller's launch timeout and one retry of the
// job, seconds after the run ended; a thousand runs cover far more.
const endedRunsKept = 1024

// endedRuns remembers the last runs that ended on this node, by job, so
// that a launch of a run that already ended here is not run a second
// time. The controller repeats a launch when it never got the answer to
// the first one (a timeout, a broken connection) and could not see the
// job on the node because it had already ended: the node then reports
// that run's end again instead, and the controller records the outcome
// the run really had. A requeued or retried job is a new run, with a new
// start time (api.LaunchRequest.Start), and runs. Owned by Daemon.mu; in
// memory only: a node restarted since the run ended runs a repeat.
type endedRuns struct {
	byJob map[uint64]endedRun
	order []uint64 // oldest first, to forget beyond endedRunsKept
}

type endedRun struct {
	start time.Time    // LaunchRequest.Start of the run
	end   api.JobEvent // its end as reported
}

// add remembers a run's end. A run launched without a start time (by an
// older controller) cannot be named and is not remembered.
func (e *endedRuns) add(start time.Time, end api.JobEvent) {
	if start.IsZero() {
		return
	}
	if e.byJob == nil {
		e.byJob = make(map[uint64]endedRun)
	}
	if _, ok := e.byJob[end.JobID]; !ok {
		e.order = append(e.order, end.JobID)
	}
	e.byJob[end.JobID] = endedRun{start: start, end: end}
	if len(e.order) > endedRunsKept {
		delete(e.byJob, e.order[0])
		e.order = e.order[1:]
	}
}

// repeatOf is the end of the run r launches again, if that run already
// ended here.
func (e *endedRuns) repeatOf(r *api.LaunchRequest) (api.JobEvent, bool) {
	run, ok := e.byJob[r.JobID]
	if !ok || r.Start.IsZero() || !run.start.Equal(r.Start) {
		return api.JobEvent{}, false
	}
	return run.end, true
}
