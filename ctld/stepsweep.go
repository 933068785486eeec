package ctld

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

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

// sweepCandidate is one node's silent part of a step.
type sweepCandidate struct {
	job  uint64
	step int
}

// run asks, in the background, every up node that owes a report on a
// step granted before the cutoff whether it knows the step.
func (w stepSweep) run(now time.Time) {
	s := w.srv
	cutoff := now.Add(-stepCredentialLifetime - stepLaunchGrace)
	byNode := make(map[string][]sweepCandidate)
	clients := make(map[string]*api.NodeClient)
	s.mu.RLock()
	for _, j := range s.q.unfinished() {
		for id, rec := range j.steps.running {
			if rec.Step.Start.After(cutoff) {
				continue
			}
			for _, n := range rec.Layout {
				nd := s.nodes.get(n.Node)
				if nd == nil || !s.nodes.isUp(n.Node) ||
					slices.ContainsFunc(rec.Reports, func(r store.StepNodeEnd) bool { return r.Node == n.Node }) {
					continue
				}
				byNode[n.Node] = append(byNode[n.Node], sweepCandidate{job: rec.Step.JobID, step: id})
				clients[n.Node] = nd.client
			}
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
		if !slices.ContainsFunc(known, func(n api.NodeStep) bool { return n.JobID == c.job && n.StepID == c.step }) {
			evs = append(evs, api.JobEvent{JobID: c.job, StepID: c.step, Node: node, Kind: api.EventStepEnded,
				Time: time.Now(), State: api.StateFailed, Message: "never started on the node: srun did not launch it there"})
		}
	}
	if len(evs) == 0 {
		return
	}
	if err := s.applyEvents(evs); err != nil {
		s.log.Printf("steps: recording %d steps that never started on %s: %v", len(evs), node, err)
		return
	}
	s.log.Printf("steps: %d steps never started on %s; their parts there are over", len(evs), node)
}
