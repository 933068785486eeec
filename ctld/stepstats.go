package ctld

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// stepStatsPath is the node plane's live figures of a step (sstat).
const stepStatsPath = "/v1/steps/stats"

// stepStats collects a running step's live figures from its nodes, for
// sstat: the job's owner or an administrator may ask, as they may act on
// the step. The nodes are asked at once, outside the lock; a node that
// does not answer is named in Missing rather than failing the whole.
type stepStats struct{ srv *Server }

func (c stepStats) collect(ctx context.Context, caller peer, jobID uint64, stepID int) (*api.StepStats, error) {
	s := c.srv
	s.mu.RLock()
	j := s.q.job(jobID)
	if j == nil {
		s.mu.RUnlock()
		return nil, fault.Errorf(fault.NotFound, "job %d not found", jobID)
	}
	if !s.gate.MayModify(caller.caller(), j.rec.Job.UID) {
		s.mu.RUnlock()
		return nil, fault.Errorf(fault.Forbidden, "job %d is not yours: only its owner and administrators see its steps' figures", jobID)
	}
	rec := j.steps.running[stepID]
	if rec == nil {
		s.mu.RUnlock()
		return nil, fault.Errorf(fault.NotFound, "step %d.%s is not running", jobID, api.StepName(stepID))
	}
	out := &api.StepStats{JobID: jobID, StepID: stepID, Nodes: slices.Clone(rec.Step.Nodes), Tasks: []api.TaskStats{}}
	clients := make([]*api.NodeClient, len(rec.Layout))
	names := make([]string, len(rec.Layout))
	for i, n := range rec.Layout {
		names[i], clients[i] = n.Node, s.nodes.client(n.Node)
	}
	s.mu.RUnlock()

	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	parts := make([][]api.TaskStats, len(clients))
	var wg sync.WaitGroup
	for i, cl := range clients {
		if cl == nil {
			continue
		}
		wg.Go(func() {
			var tasks []api.TaskStats
			if err := cl.Do(ctx, http.MethodPost, stepStatsPath, api.StepStatsRequest{JobID: jobID, StepID: stepID}, &tasks); err != nil {
				s.log.Printf("step %d.%d figures from %s: %v", jobID, stepID, names[i], err)
				return
			}
			for k := range tasks {
				tasks[k].Node = names[i] // as the step names it
			}
			parts[i] = tasks
		})
	}
	wg.Wait()
	for i, p := range parts {
		if p == nil {
			out.Missing = append(out.Missing, names[i])
		}
		out.Tasks = append(out.Tasks, p...)
	}
	slices.SortFunc(out.Tasks, func(a, b api.TaskStats) int { return a.Rank - b.Rank })
	return out, nil
}
