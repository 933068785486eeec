package ctld

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/sched"
)

// Pipelines are what sbatch's workflow options ask of the controller:
// array jobs (array.go), dependencies (depend.go), hold, release, begin
// times, requeue and update (control.go), waiting for an end and test-only
// submits (wait.go), and the accounting history (acct.go). This file holds
// their settings, shared state, scheduling hooks and housekeeping.

// Defaults of PipelineConfig.
const (
	DefaultMaxArrayTasks = 100000
	DefaultAcctRetention = 30 * 24 * time.Hour
	DefaultPurgeInterval = time.Hour
)

// PipelineConfig is the admin's say on job pipelines. Zero fields take the
// defaults.
type PipelineConfig struct {
	// KillOnInvalidDep is the default of --kill-on-invalid-dep: cancel a
	// pending job whose dependency can never be satisfied, rather than
	// leave it pending (reason DependencyNeverSatisfied). nil means yes.
	KillOnInvalidDep *bool
	// RequeueOnNodeFail is the default of --requeue/--no-requeue: a job
	// whose node fails goes back to PENDING instead of ending NODE_FAIL.
	RequeueOnNodeFail bool
	// MaxArrayTasks bounds the tasks of one array job (default 100000).
	MaxArrayTasks int
	// AcctRetention is how long finished jobs stay in the state file and
	// in `corral acct` (default 30 days; negative: forever).
	AcctRetention time.Duration
	// PurgeInterval is how often finished jobs past retention are purged
	// (default 1 hour).
	PurgeInterval time.Duration
}

// fromFile fills what c leaves unset from corral.conf's pipeline lines,
// then the rest from the defaults.
func (c *PipelineConfig) fromFile(f config.Pipeline) {
	if c.KillOnInvalidDep == nil {
		c.KillOnInvalidDep = f.KillOnInvalidDep
	}
	if !c.RequeueOnNodeFail && f.JobRequeue != nil {
		c.RequeueOnNodeFail = *f.JobRequeue
	}
	if c.MaxArrayTasks == 0 {
		c.MaxArrayTasks = f.MaxArrayTasks
	}
	if c.AcctRetention == 0 {
		c.AcctRetention = f.AcctRetention
	}
	c.setDefaults()
}

func (c *PipelineConfig) setDefaults() {
	if c.KillOnInvalidDep == nil {
		yes := true
		c.KillOnInvalidDep = &yes
	}
	if c.MaxArrayTasks <= 0 {
		c.MaxArrayTasks = DefaultMaxArrayTasks
	}
	if c.AcctRetention == 0 {
		c.AcctRetention = DefaultAcctRetention
	}
	if c.PurgeInterval <= 0 {
		c.PurgeInterval = DefaultPurgeInterval
	}
}

// pipeline is the controller's pipeline state besides the queue's.
type pipeline struct {
	// ended is closed (and replaced) whenever a job or an array's pending
	// tasks end, to wake waiters (wait.go).
	ended chan struct{}
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
	p.stop = make(chan struct{})
}

// shutdown ends every long poll (http.Server.RegisterOnShutdown).
func (p *pipeline) shutdown() { p.stopOnce.Do(func() { close(p.stop) }) }

// housekeeping intervals.
const (
	housekeepTick     = 250 * time.Millisecond
	enforceLimitsTick = time.Second
)

// housekeep wakes the scheduler when a blocked job becomes eligible,
// enforces time limits lowered while jobs ran, and purges finished jobs
// past retention.
func (s *Server) housekeep(ctx context.Context) {
	t := time.NewTicker(housekeepTick)
	defer t.Stop()
	s.purgeFinished(time.Now())
	lastPurge, lastEnforce := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if w := s.pipe.wakeAt.Load(); w != 0 && now.UnixNano() >= w {
				s.pipe.wakeAt.CompareAndSwap(w, 0)
				s.Kick()
			}
			if now.Sub(lastEnforce) >= enforceLimitsTick {
				lastEnforce = now
				s.enforceTimeLimits(now)
			}
			if now.Sub(lastPurge) >= s.cfg.Pipeline.PurgeInterval {
				lastPurge = now
				s.purgeFinished(now)
			}
		}
	}
}

// pipelineRoutes adds the pipeline endpoints to the user plane.
func (s *Server) pipelineRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/jobs/test", s.withCaller(s.handleTestSubmit))
	mux.HandleFunc("POST /v1/jobs/hold", s.withCaller(s.handleControl("hold")))
	mux.HandleFunc("POST /v1/jobs/release", s.withCaller(s.handleControl("release")))
	mux.HandleFunc("POST /v1/jobs/requeue", s.withCaller(s.handleControl("requeue")))
	mux.HandleFunc("POST /v1/jobs/update", s.withCaller(s.handleUpdate))
	mux.HandleFunc("GET /v1/jobs/{id}/wait", s.withCaller(s.handleWait))
	mux.HandleFunc("GET /v1/acct", s.withCaller(s.handleAcct))
}

// blockedLocked is why a pending job may not start now, "" if nothing
// stops it: a hold, a begin time still ahead, or its dependency. task is
// the job's array index (for aftercorr), nil outside arrays. Wake times
// go to notes (nil: nowhere).
func (s *Server) blockedLocked(job *api.Job, task *int, now time.Time, notes *cycleNotes) api.Reason {
	if r := heldOrEarly(job, now); r != "" {
		if r == api.ReasonBeginTime {
			notes.wakeAtLeast(*job.Spec.Begin)
		}
		return r
	}
	if d := job.Spec.Dependency; d != nil {
		switch s.q.dependency(job, d, task, now, notes) {
		case depWait:
			return api.ReasonDependency
		case depNever:
			return api.ReasonDependencyNeverSatisfied
		}
	}
	return ""
}

// heldOrEarly is the cheap part of blockedLocked: hold and begin time.
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

func (s *Server) killOnInvalidDep(job *api.Job) bool {
	if k := job.Spec.KillOnInvalidDep; k != nil {
		return *k
	}
	return *s.cfg.Pipeline.KillOnInvalidDep
}

// applyPipelineLocked runs first in applyLocked (s.mu write, cycleMu
// held): array remainders take their first candidate's priority and
// reason, and jobs whose dependency can never be satisfied are cancelled.
func (s *Server) applyPipelineLocked(snap sched.Snapshot, c cycleNotes, plan sched.Plan, now time.Time) {
	if w := c.wake; w != 0 {
		s.pipe.wakeAt.Store(w)
	}
	if len(c.first) > 0 {
		for _, p := range snap.Pending {
			if r := c.first[p.ID].remJob(); r != nil {
				r.Priority = p.Priority
				r.Reason, r.PlannedStart, r.PlannedNodes = api.ReasonNone, nil, nil
			}
		}
		for _, e := range plan.Pending {
			if r := c.first[e.JobID].remJob(); r != nil {
				r.Reason = e.Reason
				if !e.Start.IsZero() {
					at := e.Start
					r.PlannedStart, r.PlannedNodes = &at, append([]string(nil), e.Nodes...)
				}
			}
		}
	}
	s.killInvalidDepsLocked(c.kills, now)
}

// startCandidateLocked returns the job a plan's start names if it may
// start on nodes now: an active pending job, or an array task that then
// leaves its array's remainder with the start's commit. nil refuses the
// start for this cycle. The limits the planner knows (%N, singleton,
// policies) are not checked again: only cycles start jobs, so nothing
// has started since the snapshot.
func (s *Server) startCandidateLocked(id uint64, nodes []string) *job {
	j := s.q.pendingJob(id)
	if j == nil {
		return nil
	}
	job := &j.rec.Job
	// A hold or an update may have come after the snapshot.
	if heldOrEarly(job, time.Now()) != "" {
		return nil
	}
	// A requeued job is not started on a node that may still have its
	// earlier run: one whose latest registration lists it, or that has
	// not registered since the requeue (the node might take the launch
	// for a repeat of the run whose end it has not yet had acknowledged).
	for _, name := range nodes {
		if n := s.nodes.get(name); n != nil && containsID(n.reported, id) || s.pipe.avoid[id] == name {
			return nil
		}
	}
	// Nor anywhere while that node is DOWN (the run may go on there
	// unseen, e.g. a stopped noded) or still lists it: no job ever runs
	// twice at once (nodes.go).
	if old, ok := s.pipe.avoid[id]; ok && s.nodes.oldRunMayLive(id, old) {
		return nil
	}
	return j
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// addPipelineLaunch adds what the pipeline options give the node.
func addPipelineLaunch(j *job, req *api.LaunchRequest) {
	job, spec := &j.rec.Job, &j.rec.Job.Spec
	req.Restarts = job.Restarts
	req.Export, req.OpenMode, req.Signal, req.Input = spec.Export, spec.OpenMode, spec.Signal, spec.Input
	if job.ArrayJobID != 0 && job.ArrayTaskID != nil && spec.Array != nil {
		req.Array = launchArray(job.ArrayJobID, *job.ArrayTaskID, spec.Array)
	}
}

func (s *Server) wakeWaitersLocked() {
	close(s.pipe.ended)
	s.pipe.ended = make(chan struct{})
}

func describeRef(id uint64, task *int) string {
	if task != nil {
		return api.TaskRef{JobID: id, Task: *task}.String()
	}
	return fmt.Sprint(id)
}
