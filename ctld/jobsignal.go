package ctld

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/store"
)

// Signalling a job without ending it (scancel -s): the controller checks
// who may and which jobs are running, then asks each node that holds the
// job's processes of the scope to deliver it (noded's POST
// /v1/jobs/signal); nothing is committed. As in Slurm 22.05 only a
// running job takes a signal; the refusals use Slurm's words, which
// scancel prints after "Kill job error on job id N: ".
const (
	// ESLURM_TRANSITION_STATE_NO_UPDATE: a pending or suspended job.
	signalNotNow = "Job can not be altered now, try again later"
	// ESLURM_ALREADY_DONE: the job ended or is ending.
	signalDone = "Job/step already completing or completed"
	// ESLURM_JOB_SCRIPT_MISSING: --batch or --full to an allocation.
	signalNoScript = "Job script not specified"
)

// nodeSignalPath is noded's route that delivers a signal.
const nodeSignalPath = "/v1/jobs/signal"

// deliveryOrder is one node's part of a signal.
type deliveryOrder struct {
	ref    string // the job as the request named it
	node   string
	client *api.NodeClient
	req    api.NodeSignalRequest
}

// signalJobs sends req's signal to the running jobs it names. A whole
// array signals its running tasks and is refused only when none runs.
func (s *Server) signalJobs(caller peer, req api.SignalJobsRequest) (api.JobsResponse, error) {
	if err := checkSignalRequest(&req); err != nil {
		return api.JobsResponse{}, err
	}
	resp := api.JobsResponse{Done: []string{}}
	errs := newRefusals[string]()
	refused := map[string]bool{}
	var orders []deliveryOrder
	s.mu.Lock()
	for _, ref := range refsOf(req.JobsRequest) {
		jobs, _, msg := s.q.resolve(ref)
		var mine []deliveryOrder
		for _, j := range jobs {
			if !s.gate.MayAct(caller.caller(), j.rec.Job.UID) {
				mine, msg = nil, fmt.Sprintf("job %s belongs to %s", ref, j.rec.Job.User)
				break
			}
			nodes, why := j.signalNodes(req)
			if why != "" {
				msg = why
				continue
			}
			mine = append(mine, deliveryOrder{ref: ref.String()}) // no node: nothing to deliver
			for _, n := range nodes {
				if !s.nodes.isUp(n) {
					why = fmt.Sprintf("job %s: node %s is down", ref, n)
					break
				}
				nr := api.NodeSignalRequest{JobID: j.rec.Job.ID, Signal: req.Signal, Scope: req.Scope, Step: req.Step}
				mine = append(mine, deliveryOrder{ref: ref.String(), node: n, client: s.nodes.client(n), req: nr})
			}
			if why != "" {
				mine, msg = nil, why
				break
			}
		}
		if len(mine) == 0 {
			errs.add(ref.String(), "%s", msg)
			refused[ref.String()] = true
			continue
		}
		orders = append(orders, mine...)
	}
	s.mu.Unlock()

	failed := deliverSignals(s.bgCtx, orders)
	by := s.users.name(caller.UID)
	for _, ref := range refsOf(req.JobsRequest) {
		name := ref.String()
		if refused[name] {
			continue
		}
		if msg, ok := failed[name]; ok {
			errs.add(name, "%s", msg)
			continue
		}
		s.log.Printf("signal %d (%s) to job %s by %s", req.Signal, req.Scope, name, by)
		resp.Done = append(resp.Done, name)
	}
	resp.Errors, resp.ErrorCount = errs.listed(), errs.count
	return resp, nil
}

// checkSignalRequest refuses a request that names nothing or a signal or
// scope that does not exist; an empty scope is Slurm's default, the steps.
func checkSignalRequest(req *api.SignalJobsRequest) error {
	if len(req.IDs)+len(req.Tasks) == 0 {
		return fault.Errorf(fault.Invalid, "nothing to signal: give job IDs")
	}
	if err := tooManyRefs("signal", len(req.IDs)+len(req.Tasks), "jobs"); err != nil {
		return err
	}
	if req.Signal < 1 || req.Signal > api.MaxSignal {
		return fault.Errorf(fault.Invalid, "signal %d does not exist: give 1 to %d", req.Signal, api.MaxSignal)
	}
	if req.Scope == "" {
		req.Scope = api.SignalSteps
	}
	if !req.Scope.Valid() {
		return fault.Errorf(fault.Invalid, "unknown signal scope %q: give %s, %s or %s", req.Scope, api.SignalSteps, api.SignalBatch, api.SignalFull)
	}
	if req.Step != nil && (req.Scope != api.SignalSteps || *req.Step < 0) {
		return fault.Errorf(fault.Invalid, "a step's signal goes to its tasks: give a step number and no batch or full scope")
	}
	return nil
}

// signalNodes lists the nodes that hold j's processes of req's scope, or
// says why j takes no signal. Called with Server.mu held.
func (j *job) signalNodes(req api.SignalJobsRequest) ([]string, string) {
	job := &j.rec.Job
	switch {
	case job.State == api.StatePending || job.State == api.StateSuspended:
		return nil, signalNotNow
	case job.State != api.StateRunning || j.cancelRequested || j.rec.RequeueRequested:
		return nil, signalDone
	case req.Step != nil:
		rec := j.steps.running[*req.Step]
		if rec == nil {
			return nil, fmt.Sprintf("step %d.%s is not running", job.ID, api.StepName(*req.Step))
		}
		var nodes []string
		for _, n := range rec.Layout {
			if !slices.ContainsFunc(rec.Reports, func(r store.StepNodeEnd) bool { return r.Node == n.Node }) {
				nodes = append(nodes, n.Node)
			}
		}
		return nodes, ""
	case req.Scope == api.SignalSteps:
		return job.Nodes, ""
	case job.Spec.Allocation:
		return nil, signalNoScript
	}
	return []string{j.batchHost()}, ""
}

// deliverSignals sends the orders in parallel and returns, by reference,
// why a node did not deliver.
func deliverSignals(ctx context.Context, orders []deliveryOrder) map[string]string {
	var mu sync.Mutex
	failed := map[string]string{}
	var wg sync.WaitGroup
	for _, o := range orders {
		if o.node == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if o.client == nil {
				err = fmt.Errorf("node %s is not registered", o.node)
			} else {
				ctx, cancel := context.WithTimeout(ctx, signalTimeout)
				err = o.client.Do(ctx, http.MethodPost, nodeSignalPath, o.req, nil)
				cancel()
				if err != nil {
					err = fmt.Errorf("node %s could not deliver the signal: %v", o.node, err)
				}
			}
			if err != nil {
				mu.Lock()
				failed[o.ref] = err.Error()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}
