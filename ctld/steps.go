package ctld

import (
	"context"
	"log"
	"net/http"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/steplayout"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
)

// Job steps (docs/steps.md): srun asks for a step inside a running job;
// ctld checks that the caller may act on the job, lays the tasks out over
// the allocation (package steplayout), commits the step and signs a
// credential that lets srun launch it on the nodes. Nodes report each
// node's end; the step ends once all of them have, also after its job's
// end (stepcommit.go).

// stepCredentialLifetime bounds how long srun has to send a granted
// step's launches to its nodes.
const stepCredentialLifetime = 5 * time.Minute

// refuseStep is a refusal in srun's words ("Unable to create step for
// job N: ...").
func refuseStep(k fault.Kind, jobID uint64, reason string) error {
	return fault.Errorf(k, "Unable to create step for job %d: %s", jobID, reason)
}

// createStep grants a step in job jobID to caller: its owner, or an
// admin (root included).
func (s *Server) createStep(caller peer, jobID uint64, req api.StepRequest) (api.StepGrant, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.q.job(jobID)
	switch {
	case j == nil:
		return api.StepGrant{}, refuseStep(fault.NotFound, jobID, "Invalid job id specified")
	case !s.gate.MayModify(caller.caller(), j.rec.Job.UID):
		return api.StepGrant{}, refuseStep(fault.Forbidden, jobID, "Access/permission denied (the job belongs to "+j.rec.Job.User+")")
	case j.state() == api.StatePending:
		return api.StepGrant{}, refuseStep(fault.Conflict, jobID, "Job is pending execution")
	case j.state() != api.StateRunning || j.cancelRequested || j.rec.RequeueRequested || j.alloc.released != nil:
		return api.StepGrant{}, refuseStep(fault.Conflict, jobID, "Job/step already completing or completed")
	}
	held := make(map[string]int)
	for _, st := range j.steps.running {
		if st.JobEnd == nil { // not one of an earlier run, being killed
			steplayout.Hold(held, st.Layout, st.Overlap)
		}
	}
	l, err := steplayout.Place(stepAlloc(j, s.nodes), held, req)
	if err != nil {
		return api.StepGrant{}, err
	}
	id, err := s.q.nextStepID(j)
	if err != nil {
		return api.StepGrant{}, err
	}
	job := &j.rec.Job
	name := req.Name
	if name == "" {
		name = job.Name
	}
	rec := &store.StepRecord{
		Step: api.Step{JobID: jobID, StepID: id, Name: name, State: api.StateRunning, Nodes: l.NodeNames(),
			Tasks: l.Tasks, TasksPerNode: l.TasksPerNode(), CPUsPerTask: l.CPUsPerTask, Start: now},
		Layout: l.Nodes, Overlap: req.Overlap, MemBytes: req.MemBytes, GPUsPerTask: req.GPUsPerTask,
	}
	if err := s.q.commitSteps(rec); err != nil {
		return api.StepGrant{}, err
	}
	cred := api.StepCredential{JobID: jobID, StepID: id, UID: job.UID, GID: job.GID, Layout: l.Nodes,
		Tasks: l.Tasks, Expires: now.Add(stepCredentialLifetime)}
	api.SignCredential(&cred, s.key)
	grant := api.StepGrant{Step: rec.Step, Layout: l.Nodes, Credential: cred, MPIDefault: s.mpiDefault}
	if s.tls.ca != nil {
		grant.CAPEM = string(s.tls.ca.PEM)
	}
	s.log.Printf("step %d.%d: %d tasks on %s", jobID, id, l.Tasks, hostlist.Compress(l.NodeNames()))
	return grant, nil
}

// stepAlloc is j's allocation as steps see it: on every node the job's
// CPUs and memory, and the GPUs it holds there. The caller holds
// Server.mu.
func stepAlloc(j *job, nodes *nodeRegistry) steplayout.Alloc {
	job := &j.rec.Job
	a := steplayout.Alloc{JobID: job.ID}
	for _, name := range job.Nodes {
		nd := steplayout.Node{Name: name, CPUs: job.CPUs, MemBytes: job.MemBytes}
		if c := nodes.client(name); c != nil {
			nd.Addr = c.BaseURL
		}
		for _, g := range job.GPUAlloc {
			if g.Node == name {
				nd.GPUs = len(g.Shares)
			}
		}
		a.Nodes = append(a.Nodes, nd)
	}
	return a
}

// jobSteps lists a job's steps, ended ones included, for a caller who may
// see the job.
func (s *Server) jobSteps(caller peer, jobID uint64) ([]api.Step, error) {
	s.mu.RLock()
	j := s.q.job(jobID)
	var owner uint32
	if j != nil {
		owner = j.rec.Job.UID
	}
	s.mu.RUnlock()
	if j == nil {
		return nil, fault.Errorf(fault.NotFound, "job %d not found", jobID)
	}
	if !s.gate.MayView(caller.caller(), owner) {
		return nil, fault.Errorf(fault.Forbidden, "job %d is not yours: you may see only your own jobs", jobID)
	}
	recs, err := s.q.store.Steps(jobID)
	if err != nil {
		return nil, err
	}
	out := make([]api.Step, len(recs))
	for i, r := range recs {
		out[i] = r.Step
	}
	return out, nil
}

// runningStepsLocked are a job's running steps in ID order, for its
// views. The caller holds Server.mu.
func runningStepsLocked(j *job) []api.Step {
	if len(j.steps.running) == 0 {
		return nil
	}
	out := make([]api.Step, 0, len(j.steps.running))
	for _, id := range sortedStepIDs(j.steps.running) {
		out = append(out, j.steps.running[id].Step)
	}
	return out
}

// stepUpdates collects the step records one batch of node events makes,
// each step's latest, to be committed with the batch's job changes.
type stepUpdates struct {
	recs []*store.StepRecord
	at   map[[2]uint64]int // job and step ID -> index in recs
}

// report applies a node's EventStepEnded, to a step of a running job or
// one waiting for its nodes after its job's end. Delivery is at least
// once: an end for a step that ended, from a node not in the step or one
// that reported already changes nothing. The caller holds Server.mu for
// writing.
func (u *stepUpdates) report(j *job, ev api.JobEvent, now time.Time) {
	if j == nil {
		return
	}
	k := [2]uint64{ev.JobID, uint64(int64(ev.StepID))}
	base := j.steps.running[ev.StepID]
	i, pending := u.at[k]
	if pending {
		base = u.recs[i]
	}
	if base == nil {
		return
	}
	next := stepAfterReport(base, store.StepNodeEnd{Node: ev.Node, State: ev.State, ExitCode: ev.ExitCode, Signal: ev.Signal,
		CPUTimeUsec: ev.CPUTimeUsec, PeakMemBytes: ev.PeakMemBytes, Message: ev.Message}, eventTime(ev, now))
	switch {
	case next == nil:
	case pending:
		u.recs[i] = next
	default:
		if u.at == nil {
			u.at = make(map[[2]uint64]int)
		}
		u.at[k] = len(u.recs)
		u.recs = append(u.recs, next)
	}
}

// logEnds logs the steps that the batch ends.
func (u *stepUpdates) logEnds(log *log.Logger) {
	for _, r := range u.recs {
		if st := &r.Step; st.State.Terminal() {
			log.Printf("end step %d.%s %s exit=%d signal=%d", st.JobID, api.StepName(st.StepID), st.State, st.ExitCode, st.Signal)
		}
	}
}

// The node routes for steps: kill a step's tasks on the node, and list
// the steps the node knows (running, or ended with the end not yet
// acknowledged).
const (
	stepCancelPath = "/v1/steps/cancel"
	nodeStepsPath  = "/v1/steps"
)

// cancelStep cancels a running step: its owner, an operator or above. It
// is recorded, then every node of the step is told to kill the step's
// tasks; the step ends CANCELLED when they have reported.
func (s *Server) cancelStep(caller peer, jobID uint64, stepID int) (api.Step, error) {
	s.mu.Lock()
	j := s.q.job(jobID)
	if j == nil {
		s.mu.Unlock()
		return api.Step{}, fault.Errorf(fault.NotFound, "job %d not found", jobID)
	}
	if !s.gate.MayAct(caller.caller(), j.rec.Job.UID) {
		s.mu.Unlock()
		return api.Step{}, fault.Errorf(fault.Forbidden, "job %d is not yours: you may cancel only your own steps", jobID)
	}
	rec := j.steps.running[stepID]
	if rec == nil {
		s.mu.Unlock()
		return api.Step{}, fault.Errorf(fault.NotFound, "step %d.%s is not running", jobID, api.StepName(stepID))
	}
	if !rec.CancelRequested {
		next := cloneStep(rec)
		next.CancelRequested = true
		uid := caller.UID
		next.Step.CancelledBy = &uid
		if err := s.q.commitSteps(next); err != nil {
			s.mu.Unlock()
			return api.Step{}, err
		}
		rec = next
	}
	var orders []stepCancelOrder
	for _, n := range rec.Layout {
		if slices.ContainsFunc(rec.Reports, func(r store.StepNodeEnd) bool { return r.Node == n.Node }) {
			continue
		}
		if c := s.nodes.client(n.Node); c != nil {
			orders = append(orders, stepCancelOrder{jobID: jobID, stepID: stepID, node: n.Node, client: c,
				current: func(node string) *api.NodeClient {
					s.mu.RLock()
					defer s.mu.RUnlock()
					return s.nodes.liveClient(node)
				}})
		}
	}
	s.bg.Add(len(orders))
	s.mu.Unlock()
	for _, o := range orders {
		go func() {
			defer s.bg.Done()
			ev, err := o.deliver(s.bgCtx)
			if err == nil && ev != nil {
				err = s.applyEvents([]api.JobEvent{*ev})
			}
			if err != nil {
				s.log.Printf("cancel step %d.%s on %s: %v", o.jobID, api.StepName(o.stepID), o.node, err)
			}
		}()
	}
	s.log.Printf("cancel step %d.%s on %d nodes", jobID, api.StepName(stepID), len(orders))
	return rec.Step, nil
}

// stepSweep ends the parts of steps that were granted but never started
// on a node: srun got the grant and never launched the step there (it
// died, or gave up), so that node will never report an end, and the step
// would hold its CPUs until its job ends. Once the step's credential has
// expired no launch can arrive any more; a node that then does not list
// the step (GET /v1/steps lists the running ones and those whose end is
// still on its way) has its part recorded as over, FAILED.
type stepSweep struct{ srv *Server }

// stepSweepInterval is how often housekeeping sweeps; stepLaunchGrace is
// how long after its credential expired a step is left to its nodes.
const (
	stepSweepInterval = 30 * time.Second
	stepLaunchGrace   = time.Minute
)

// sweepCandidate is one node's silent part of a step; jobEnd: of a step
// waiting for its nodes after its job's end (then that part ended with
// the job).
type sweepCandidate struct {
	job    uint64
	step   int
	jobEnd *store.StepJobEnd
}

// run ends the waiting steps past their bound (expire), then asks, in
// the background, every up node that owes a report on a step granted
// before the cutoff, or on a step whose job ended stepEndAsk ago, whether
// it knows the step.
func (w stepSweep) run(now time.Time) {
	s := w.srv
	w.expire(now)
	cutoff := now.Add(-stepCredentialLifetime - stepLaunchGrace)
	byNode := make(map[string][]sweepCandidate)
	clients := make(map[string]*api.NodeClient)
	add := func(rec *store.StepRecord) {
		for _, node := range silentNodes(rec) {
			if c := s.nodes.client(node); c != nil && s.nodes.isUp(node) {
				byNode[node] = append(byNode[node], sweepCandidate{job: rec.Step.JobID, step: rec.Step.StepID, jobEnd: rec.JobEnd})
				clients[node] = c
			}
		}
	}
	s.mu.RLock()
	for _, j := range s.q.unfinished() {
		for _, rec := range j.steps.running {
			if !rec.Step.Start.After(cutoff) && rec.JobEnd == nil {
				add(rec)
			}
		}
	}
	for rec := range s.q.waitingSteps() {
		if now.Sub(rec.JobEnd.At) >= stepEndAsk {
			add(rec)
		}
	}
	s.bg.Add(len(byNode))
	s.mu.RUnlock()
	for node, cands := range byNode {
		go func() {
			defer s.bg.Done()
			w.ask(node, clients[node], cands)
		}()
	}
}

// ask records the parts of cands that node does not know as over.
func (w stepSweep) ask(node string, client *api.NodeClient, cands []sweepCandidate) {
	s := w.srv
	ctx, cancel := context.WithTimeout(s.bgCtx, nodeCallTimeout)
	defer cancel()
	var known []api.NodeStep
	if err := client.Do(ctx, http.MethodGet, nodeStepsPath, nil, &known); err != nil {
		s.log.Printf("steps: asking %s which steps it runs: %v", node, err)
		return
	}
	var evs []api.JobEvent
	for _, c := range cands {
		if slices.ContainsFunc(known, func(n api.NodeStep) bool { return n.JobID == c.job && n.StepID == c.step }) {
			continue
		}
		at, st, why := time.Now(), api.StateFailed, "never started on the node: srun did not launch it there"
		if c.jobEnd != nil {
			at, st, why = c.jobEnd.At, api.StateCancelled, "not running on the node after its job ended"
		}
		evs = append(evs, api.JobEvent{JobID: c.job, StepID: c.step, Node: node, Kind: api.EventStepEnded,
			Time: at, State: st, Message: why})
	}
	if len(evs) == 0 {
		return
	}
	if err := s.applyEvents(evs); err != nil {
		s.log.Printf("steps: recording %d steps that never started on %s: %v", len(evs), node, err)
		return
	}
	s.log.Printf("steps: %d steps not running on %s; their parts there are over", len(evs), node)
}
