package shim

import (
	"path/filepath"
	"strconv"

	"github.com/corral-hpc/corral/api"
)

// A job step on this node (`corral-shim step <jobdir> <stepid>`): noded
// writes step.json and starts the runner, which starts the node's tasks
// in the job's running container (stepspawn.go) and relays their I/O to srun.
//
// Step directory (<jobdir>/steps/<stepid>/):
//
//	step.json    StepJob (written by noded)
//	runner.pid   the runner's PID (written by the runner at start)
//	tasks        "RANK PID" a line, the tasks' processes (sstat reads them)
//	result.json  StepResult, written last and atomically
const (
	StepsDir       = "steps"
	StepFile       = "step.json"
	RunnerPidFile  = "runner.pid"
	TaskPidsFile   = "tasks"
	StepResultFile = "result.json"
	// StepArg is the runner's first argument: corral-shim step JOBDIR STEPID.
	StepArg = "step"
)

// StepJob is step.json: a step's launch on this node.
type StepJob struct {
	Launch api.StepLaunch `json:"launch"` // as srun sent it (credential included)
	Node   string         `json:"node"`   // this node's name
	// NodeID is this node's index in Launch.Credential.Layout; the
	// tasks' SLURM_NODEID is its index in the step's node list, which is
	// the same when the layout is in hostlist order.
	NodeID int `json:"node_id"`
	// Ranks are this node's global ranks (SLURM_PROCID), from the layout.
	Ranks []int `json:"ranks"`
	// LaunchNodeIP is srun's host (the host part of IOAddr),
	// SLURM_LAUNCH_NODE_IPADDR.
	LaunchNodeIP string `json:"launch_node_ip"`
}

// StepResult is a step's result.json: how the node's tasks ended.
type StepResult struct {
	// ExitCode is the highest of the tasks' (128+signal for a signalled
	// task), Signal that task's signal or 0.
	ExitCode int `json:"exit_code"`
	Signal   int `json:"signal"`
	// CPUTimeUsec and PeakMemBytes are the tasks' own, from their
	// resource usage at exit (the job's cgroup holds every step): CPU time
	// summed, the peak the largest resident set of any one process.
	CPUTimeUsec  int64        `json:"cpu_time_usec"`
	PeakMemBytes int64        `json:"peak_mem_bytes"`
	Tasks        []TaskResult `json:"tasks"`
	// OOMKills are the job's OOM kills while the tasks ran that count as
	// the step's (stepoom.go): the node's part ends OUT_OF_MEMORY.
	OOMKills int64 `json:"oom_kills,omitempty"`
	// Message says why the tasks could not start (or run).
	Message string `json:"message,omitempty"`
}

// TaskResult is one task's end.
type TaskResult struct {
	Rank     int `json:"rank"`
	ExitCode int `json:"exit_code"`
	Signal   int `json:"signal"`
}

// StepDir is the directory of step stepID of the job in jobDir.
func StepDir(jobDir string, stepID int) string {
	return filepath.Join(jobDir, StepsDir, strconv.Itoa(stepID))
}

// WriteStepJob writes step.json into a step's directory.
func WriteStepJob(dir string, s *StepJob) error { return replaceJSON(dir, StepFile, s) }

// ReadStepJob reads step.json.
func ReadStepJob(dir string) (*StepJob, error) {
	var s StepJob
	if err := readJSON(dir, StepFile, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// WriteStepResult writes a step's result.json atomically.
func WriteStepResult(dir string, r *StepResult) error { return replaceJSON(dir, StepResultFile, r) }

// ReadStepResult reads a step's result.json; os.ErrNotExist means the
// runner wrote none.
func ReadStepResult(dir string) (*StepResult, error) {
	var r StepResult
	if err := readJSON(dir, StepResultFile, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
