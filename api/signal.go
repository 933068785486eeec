package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// SignalScope says which of a running job's processes a signal reaches,
// as Slurm 22.05 decides it (scancel -s, sbatch --signal).
type SignalScope string

const (
	// SignalSteps: every step's processes, on every node of the job, but
	// not the batch script nor what it runs itself. Slurm's default for
	// scancel -s and for sbatch --signal without B:.
	SignalSteps SignalScope = "steps"
	// SignalBatch: the batch script's shell alone (scancel -b, --signal=B:);
	// the commands it runs are not signalled, but a shell may pass it on.
	SignalBatch SignalScope = "batch"
	// SignalFull: the batch script and every process it started (scancel
	// -f); srun steps started from the script forward it to their tasks.
	SignalFull SignalScope = "full"
)

// Valid says whether s is one of the scopes; "" is not.
func (s SignalScope) Valid() bool {
	return s == SignalSteps || s == SignalBatch || s == SignalFull
}

// SignalJobsRequest is POST /v1/jobs/signal: send Signal to the named
// running jobs without ending them (scancel -s). With Step set, only that
// step's tasks get it, and Scope must be empty or SignalSteps. The answer
// is a JobsResponse keyed by the names as given ("12", "12_3").
type SignalJobsRequest struct {
	JobsRequest
	Signal int         `json:"signal"`
	Scope  SignalScope `json:"scope"`
	Step   *int        `json:"step,omitempty"`
}

// NodeSignalRequest is the node plane's POST /v1/jobs/signal (ctld →
// noded): deliver Signal to the job's processes on this node that Scope
// (or Step, when set) names. The job keeps running.
type NodeSignalRequest struct {
	JobID  uint64      `json:"job_id"`
	Signal int         `json:"signal"`
	Scope  SignalScope `json:"scope"`
	Step   *int        `json:"step,omitempty"`
}

// MaxSignal is the highest signal number Linux has (SIGRTMAX).
const MaxSignal = 64

// signalNames are the names Slurm's commands take (sig_name2num in Slurm
// 22.05), with their Linux numbers.
var signalNames = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "USR2": 12,
	"ALRM": 14, "TERM": 15, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21,
	"TTOU": 22, "URG": 23, "XCPU": 24,
}

// ParseSignalName reads a signal as Slurm's commands do: a number from 1
// to MaxSignal, or a name from Slurm's list in any case, with or without
// SIG (USR1, SIGUSR1, sigusr1, 10). It reports false for anything else.
func ParseSignalName(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 1 && n <= MaxSignal
	}
	upper := strings.ToUpper(s)
	n, ok := signalNames[strings.TrimPrefix(upper, "SIG")]
	return n, ok
}

// SignalJobs sends req (POST /v1/jobs/signal), in batches of at most
// MaxRefsPerRequest jobs.
func (c *Client) SignalJobs(ctx context.Context, req SignalJobsRequest) (*JobsResponse, error) {
	resp := JobsResponse{Done: []string{}}
	for _, b := range refBatches(req.IDs, req.Tasks) {
		one := req
		one.JobsRequest = b
		var part JobsResponse
		if err := c.Do(ctx, http.MethodPost, "/v1/jobs/signal", one, &part); err != nil {
			return nil, err
		}
		resp.add(&part)
	}
	return &resp, nil
}

// NodeSuspendRequest is the node plane's POST /v1/jobs/suspend (ctld →
// noded): freeze (Suspend) or thaw the job's processes on this node
// through its cgroup (scontrol suspend, resume).
type NodeSuspendRequest struct {
	JobID   uint64 `json:"job_id"`
	Suspend bool   `json:"suspend"`
}
