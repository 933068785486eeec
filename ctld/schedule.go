package ctld

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/sched"
)

// reasonPartitionDown marks pending jobs whose partition is no longer
// configured (Slurm's name for it).
const reasonPartitionDown api.Reason = "PartitionDown"

// launchOrder is one launch to send after a start is on disk.
type launchOrder struct {
	id     uint64
	seq    uint64
	node   string
	client *api.NodeClient
	req    api.LaunchRequest
}

// applyLocked carries out a plan. Each start is re-checked against the
// present (the job may have been cancelled, a node may have gone down
// while planning ran) and all starts are persisted in one transaction
// before any launch is sent.
func (s *Server) applyLocked(snap sched.Snapshot, notes cycleNotes, plan sched.Plan, now time.Time) []launchOrder {
	s.pipe.noteWake(notes.nextWake())
	notes.applyToArrays(snap, plan)
	s.killInvalidDepsLocked(notes.invalidDeps(), now)
	for _, p := range snap.Pending {
		if j := s.q.unfinishedJob(p.ID); j != nil && j.state() == api.StatePending {
			j.rec.Job.Priority = p.Priority
		}
	}
	for _, e := range plan.Pending {
		j := s.q.unfinishedJob(e.JobID)
		if j == nil || j.state() != api.StatePending {
			continue
		}
		// Reasons are shown, not persisted: they change every cycle. A
		// LaunchFailed reason sticks until the job starts again, so users
		// see why a job went back from RUNNING (Message has the details).
		if j.rec.Job.Reason != api.ReasonLaunchFailed {
			j.rec.Job.Reason = e.Reason
		}
		j.rec.Job.PlannedStart, j.rec.Job.PlannedNodes = nil, nil
		if !e.Start.IsZero() {
			at := e.Start
			j.rec.Job.PlannedStart = &at
			j.rec.Job.PlannedNodes = append([]string(nil), e.Nodes...)
		}
	}
	if len(plan.Starts) == 0 {
		return nil
	}
	free := s.nodes.free(s.q.allocation())
	heldGPUs := s.q.heldGPUs() // devices are checked per share
	var changes []change
	for _, st := range plan.Starts {
		st = st.InHostlistOrder()
		j := s.q.startCandidate(st.JobID, time.Now()) // an active job or an array task
		if j == nil || j.state() != api.StatePending || len(st.Nodes) == 0 || !s.pipe.mayStart(st.JobID, st.Nodes, s.nodes) {
			continue
		}
		cpus, mem := s.nodes.sizeOn(&j.rec.Job, st.Nodes) // all of each node's, for an exclusive job
		need := sched.Resources{CPUs: cpus, MemBytes: mem}
		ok := true
		for _, name := range st.Nodes {
			f, up := free[name]
			if !up || !need.Fits(f) || !s.parts.contains(j.rec.Job.Partition, name) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		gpuAlloc, ok := s.nodes.startGPUs(&j.rec.Job, st, heldGPUs, s.parts)
		if !ok {
			continue
		}
		gpuAlloc = s.nodes.wholeGPUs(&j.rec.Job, st.Nodes, gpuAlloc, s.parts)
		for _, name := range st.Nodes {
			free[name] = free[name].Sub(need)
		}
		next, err := step(j.rec, lifecycle.Event{Kind: lifecycle.Start, Nodes: st.Nodes, GPUAlloc: gpuAlloc}, now)
		if err != nil { // checked pending above: not reached
			s.log.Printf("starting job %d: %v", j.rec.Job.ID, err)
			continue
		}
		next.Job.CPUs, next.Job.MemBytes = cpus, mem
		changes = append(changes, change{j, next})
	}
	if err := s.q.commit(changes, nil); err != nil {
		s.log.Printf("starting %d jobs: %v (they stay pending)", len(changes), err)
		return nil
	}
	launches := make([]launchOrder, 0, len(changes))
	for _, c := range changes {
		j := c.j
		launches = append(launches, launchOrders(j, s.nodes)...)
		s.log.Printf("start job %d on %s", j.rec.Job.ID, hostlist.Compress(j.rec.Job.Nodes))
	}
	return launches
}

// launchRequest is everything a node needs to run the job, as its batch
// host is sent it (launchRequestOn adds the node's part).
func launchRequest(j *job) api.LaunchRequest {
	job, spec := &j.rec.Job, &j.rec.Job.Spec
	req := api.LaunchRequest{
		JobID: job.ID, Name: job.Name, Partition: job.Partition,
		User: job.User, UID: job.UID, GID: job.GID, Groups: job.Groups, Home: j.rec.Home,
		Script: spec.Script, Args: spec.Args, WorkDir: spec.WorkDir, Env: spec.Env,
		CPUs: job.CPUs, MemBytes: job.MemBytes, ShmBytes: spec.ShmBytes, TimeLimit: job.TimeLimit,
		Output: spec.Output, Error: spec.Error, NodeList: job.Nodes, Umask: spec.Umask, Apps: spec.Apps,
	}
	if job.StartTime != nil {
		req.Start = *job.StartTime
	}
	addPipelineLaunch(j, &req)    // array, restarts, export, open mode, signal, input
	addEnvironmentLaunch(j, &req) // image, mounts
	addGPULaunchOn(j, j.batchHost(), &req)
	return req
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

// launch sends one launch. A failed one never loses the job: it ends
// FAILED when the node refused it for the job's own reasons, else it goes
// back to PENDING (reason LaunchFailed) and the node is taken out of
// scheduling for a while (launchFailedLocked).
func (s *Server) launch(l launchOrder) {
	defer s.bg.Done()
	err := l.send(s.bgCtx)
	var refused *api.StatusError
	if err != nil && !errors.As(err, &refused) && l.nodeHasJob(s.bgCtx) {
		err = nil // the answer was lost, but the node has the job
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.q.job(l.id)
	if j == nil || j.launch.seq != l.seq {
		return // a later start (or the job's end) has superseded this launch
	}
	j.launch.inFlight = max(j.launch.inFlight-1, 0)
	if j.launch.inFlight == 0 && j.rec.Job.Spec.Allocation {
		s.pipe.wakeLaunched() // its client may be waiting for the grant
	}
	if err == nil {
		if j.launch.ackedAt.IsZero() {
			j.launch.ackedAt = now
		}
		if j.cancelRequested || j.rec.RequeueRequested || j.limitSignalled {
			// A stop went out while this launch was on its way and may
			// have reached the node first, finding no job to stop. Now the
			// node has it: send it again (stopping is idempotent there).
			s.bg.Add(1)
			go s.resignal(signalOrder{id: l.id, node: l.node, client: l.client})
		}
		return
	}
	if s.bgCtx.Err() != nil || j.state() != api.StateRunning {
		// Shutting down (the restarted controller reconciles with the
		// node) or already ended (e.g. the node reported it first).
		return
	}
	s.launchFailedLocked(j, l, err, now)
}

// nodeHasJob asks a node whose launch answer never came (timeout, broken
// connection) whether it has the job after all: requeueing a job the node
// is running would run it twice.
func (l launchOrder) nodeHasJob(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	var ids []uint64
	if err := l.client.Do(ctx, http.MethodGet, "/v1/jobs", nil, &ids); err != nil {
		return false
	}
	return slices.Contains(ids, l.id)
}

// resignal repeats a stop for a job whose launch was answered after the
// stop was sent. A node that cannot be reached is left to the heartbeat
// checks, as for any other running job.
func (s *Server) resignal(o signalOrder) {
	defer s.bg.Done()
	ctx, cancel := context.WithTimeout(s.bgCtx, signalTimeout)
	defer cancel()
	if err := o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil); err != nil {
		s.log.Printf("job %d: repeating its stop to node %s after the launch: %v", o.id, o.node, err)
		return
	}
	s.log.Printf("job %d: stop repeated to node %s after its launch was answered", o.id, o.node)
}
