package noded

import "github.com/corral-hpc/corral/api"

// The step runner's files and types as docs/steps.md fixes them. Package
// shim (the runner's side) defines them too; this file goes once that
// lands, and the names below become shim's.

// Names inside a job directory for its steps: <jobdir>/steps/<id>/...
const (
	stepsDir       = "steps"
	stepJobFile    = "step.json"
	runnerPidFile  = "runner.pid"
	stepResultFile = "result.json"
	// runnerArg is the runner's mode: <shim command> step <jobdir> <id>.
	runnerArg = "step"
)

// stepJob is step.json: the launch and what noded derived from it for
// this node.
type stepJob struct {
	Launch       api.StepLaunch `json:"launch"`
	Node         string         `json:"node"`
	NodeID       int            `json:"node_id"`
	Ranks        []int          `json:"ranks"`
	LaunchNodeIP string         `json:"launch_node_ip"`
}

// stepResult is the runner's result.json.
type stepResult struct {
	ExitCode     int          `json:"exit_code"`
	Signal       int          `json:"signal"`
	CPUTimeUsec  int64        `json:"cpu_time_usec"`
	PeakMemBytes int64        `json:"peak_mem_bytes"`
	Tasks        []taskResult `json:"tasks"`
	Message      string       `json:"message,omitempty"`
}

type taskResult struct {
	Rank     int `json:"rank"`
	ExitCode int `json:"exit_code"`
	Signal   int `json:"signal"`
}
