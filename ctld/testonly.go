package ctld

import (
	"math"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// testOnlyID names the job a test-only submit plans; no real job has it.
const testOnlyID = math.MaxUint64

// testSubmit is a submit with --test-only: every check a submit gets,
// then a planning pass with the job added; nothing is stored.
func (s *Server) testSubmit(caller peer, req api.SubmitRequest) (api.TestSubmitResponse, error) {
	rec, err := s.checkSubmit(caller, req)
	if err != nil {
		return api.TestSubmitResponse{}, err
	}
	job := rec.Job
	if a := job.Spec.Array; a != nil {
		job.ArrayTasks = jobspec.FormatArray(*a)
	}
	resp := s.planTest(job)
	if last, err := s.store.LastJobID(); err == nil {
		resp.JobID = last + 1
	}
	return resp, nil
}

// planTest asks the planner when job would start, as if it were queued
// now: the snapshot a cycle would build, with the job added. It holds
// cycleMu like a scheduling cycle: snapshots share buffers.
func (s *Server) planTest(job api.Job) api.TestSubmitResponse {
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	return s.planTestLocked(job, time.Now())
}

// planTestLocked is planTest at now; the caller holds cycleMu.
func (s *Server) planTestLocked(job api.Job, now time.Time) api.TestSubmitResponse {
	resp := api.TestSubmitResponse{Job: job}
	s.mu.RLock()
	s.snapshots.prepare(now) // as a cycle at now would
	snap, _ := s.snapshots.build(now, &job)
	s.mu.RUnlock()
	plan := s.planner.Plan(snap)
	for _, st := range plan.Starts {
		if st.JobID == testOnlyID {
			resp.Start, resp.Nodes = &now, st.Nodes
			return resp
		}
	}
	for _, e := range plan.Pending {
		if e.JobID == testOnlyID {
			resp.Reason, resp.Nodes = e.Reason, e.Nodes
			if !e.Start.IsZero() {
				at := e.Start
				resp.Start = &at
			}
		}
	}
	return resp
}
