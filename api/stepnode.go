package api

// The node plane's step routes besides srun's launch (POST /v1/steps):
// ctld's, signed with the cluster key like every other node-plane call.

// StepCancelRequest cancels one step on a node (POST /v1/steps/cancel):
// its runner gets SIGTERM, its tasks SIGTERM and, after the kill wait,
// SIGKILL. Cancelling a step the node does not run is not an error; the
// node then refuses a launch of it that arrives later.
type StepCancelRequest struct {
	JobID  uint64 `json:"job_id"`
	StepID int    `json:"step_id"`
}

// NodeStep is one step a node knows of (GET /v1/steps, sorted by job and
// step): its runner is live, or Ended and the end not yet acknowledged
// (EventStepEnded still queued), so ctld can tell a step the node lost
// from one whose end is on its way.
type NodeStep struct {
	JobID  uint64 `json:"job_id"`
	StepID int    `json:"step_id"`
	Ended  bool   `json:"ended,omitempty"`
}
