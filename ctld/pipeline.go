package ctld

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Pipelines are what sbatch's workflow options ask of the controller:
// array jobs, dependencies, hold, release, begin times, requeue and
// update, waiting for an end, test-only submits and the accounting
// history. The pipeline type holds the state they share besides the
// queue's: the waiters of job ends, which node a requeued job must
// avoid, and when a blocked job next becomes eligible.

// pipeline is the controller's pipeline state besides the queue's.
type pipeline struct {
	// ended is closed (and replaced) whenever a job or an array's pending
	// tasks end, to wake waiters.
	ended chan struct{}
	// launched is closed (and replaced) whenever a job's last launch is
	// answered, to wake allocation clients waiting for their grant.
	launched chan struct{}
	// stop ends long polls when the user plane shuts down.
	stop     chan struct{}
	stopOnce sync.Once
	// avoid maps a requeued job to the node of its last run, until that
	// node registers without it (its end is acknowledged there).
	avoid map[uint64]string
	// wakeAt (Unix nanoseconds, 0: none) is the next moment a blocked job
	// becomes eligible (a --begin time, an after+delay); housekeeping
	// kicks the scheduler then.
	wakeAt atomic.Int64
}

func (p *pipeline) init() {
	p.avoid = make(map[uint64]string)
	p.ended = make(chan struct{})
	p.launched = make(chan struct{})
	p.stop = make(chan struct{})
}

// shutdown ends every long poll (http.Server.RegisterOnShutdown).
func (p *pipeline) shutdown() { p.stopOnce.Do(func() { close(p.stop) }) }

// wakeWaiters wakes everyone waiting for a job's end (the caller holds
// Server.mu for writing, as for the commit that ended it).
func (p *pipeline) wakeWaiters() {
	close(p.ended)
	p.ended = make(chan struct{})
}

// wakeLaunched wakes the allocation clients waiting for a grant (the
// caller holds Server.mu for writing).
func (p *pipeline) wakeLaunched() {
	close(p.launched)
	p.launched = make(chan struct{})
}

// noteWake keeps a cycle's earliest future eligibility (Unix
// nanoseconds; 0: none) for housekeeping, which kicks the scheduler then.
func (p *pipeline) noteWake(w int64) {
	if w != 0 {
		p.wakeAt.Store(w)
	}
}

// observe follows a change on its way into the queue: the node a
// requeued job must not restart on until that node stops reporting the
// old run, forgotten once the job ends. The caller holds Server.mu for
// writing.
func (p *pipeline) observe(c change) {
	old, next := c.jobs()
	switch {
	case next.Restarts > old.Restarts && len(old.Nodes) > 0:
		p.avoid[next.ID] = old.Nodes[0]
	case next.State.Terminal():
		delete(p.avoid, next.ID)
	}
}

// reported notes a node's registration: a requeued job it no longer
// lists may start there again. It reports whether one may, so the
// scheduler is woken.
func (p *pipeline) reported(node string, running []uint64) bool {
	freed := false
	for id, n := range p.avoid {
		if n == node && !containsID(running, id) {
			delete(p.avoid, id)
			freed = true
		}
	}
	return freed
}

// mayStart reports whether job id, if it was requeued, may start on
// nodes now. It is not started on a node that may still have its
// earlier run: one whose latest registration lists it, or that has not
// registered since the requeue (the node might take the launch for a
// repeat of the run whose end it has not yet had acknowledged). Nor
// anywhere while that node is DOWN (the run may go on there unseen, e.g.
// a stopped noded) or still lists it: no job ever runs twice at once.
func (p *pipeline) mayStart(id uint64, on []string, nodes *nodeRegistry) bool {
	for _, name := range on {
		if nodes.reports(name, id) || p.avoid[id] == name {
			return false
		}
	}
	if old, ok := p.avoid[id]; ok && nodes.oldRunMayLive(id, old) {
		return false
	}
	return true
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func describeRef(id uint64, task *int) string {
	if task != nil {
		return api.TaskRef{JobID: id, Task: *task}.String()
	}
	return fmt.Sprint(id)
}

// endSignal is closed when a job or an array's pending tasks next end.
func (p *pipeline) endSignal() <-chan struct{} { return p.ended }

// holdAllocation repeats look until the allocation it sees is ready or
// has ended, wait passes, the user plane stops or ctx ends; between two
// looks it sleeps until a job's last launch is answered or a job ends.
// signals gives those two channels as of now, taken before each look so
// that a change after the look wakes the next sleep.
func (p *pipeline) holdAllocation(ctx context.Context, wait time.Duration, signals func() (launched, ended <-chan struct{}),
	look func() (api.Allocation, error)) (api.Allocation, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		launched, ended := signals()
		out, err := look()
		if err != nil || out.Ready || out.State.Terminal() {
			return out, err
		}
		select {
		case <-launched:
		case <-ended:
		case <-timer.C:
			return out, nil
		case <-p.stop:
			return out, nil
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
}

// launchSignal is closed when a job's last launch is next answered.
func (p *pipeline) launchSignal() <-chan struct{} { return p.launched }

// stopping is closed when the user plane shuts down.
func (p *pipeline) stopping() <-chan struct{} { return p.stop }
