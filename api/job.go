package api

import (
	"fmt"
	"time"
)

// JobState is the lifecycle state of a job, spelled as Slurm spells it.
type JobState string

const (
	StatePending     JobState = "PENDING"
	StateRunning     JobState = "RUNNING"
	StateCompleted   JobState = "COMPLETED"
	StateFailed      JobState = "FAILED"
	StateCancelled   JobState = "CANCELLED"
	StateTimeout     JobState = "TIMEOUT"
	StateOutOfMemory JobState = "OUT_OF_MEMORY"
	StateNodeFail    JobState = "NODE_FAIL"
)

// AllStates lists every state in lifecycle order.
var AllStates = []JobState{StatePending, StateRunning, StateCompleted, StateFailed,
	StateCancelled, StateTimeout, StateOutOfMemory, StateNodeFail}

// Terminal reports whether a job in this state will never run again.
func (s JobState) Terminal() bool { return s != StatePending && s != StateRunning && s != "" }

// Short is the squeue-style two-letter code.
func (s JobState) Short() string {
	switch s {
	case StatePending:
		return "PD"
	case StateRunning:
		return "R"
	case StateCompleted:
		return "CD"
	case StateFailed:
		return "F"
	case StateCancelled:
		return "CA"
	case StateTimeout:
		return "TO"
	case StateOutOfMemory:
		return "OOM"
	case StateNodeFail:
		return "NF"
	}
	return string(s)
}

// ParseJobState accepts a full name or short code in any case.
func ParseJobState(s string) (JobState, error) {
	for _, st := range AllStates {
		if equalFold(s, string(st)) || equalFold(s, st.Short()) {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown job state %q (valid: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL or their short codes)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Reason explains why a job is pending (or why it ended), named as Slurm
// names them where Slurm has a name.
type Reason string

const (
	ReasonNone               Reason = "None"
	ReasonResources          Reason = "Resources"
	ReasonPriority           Reason = "Priority"
	ReasonDependency         Reason = "Dependency"
	ReasonPolicyLimit        Reason = "PolicyLimit"
	ReasonPartitionTimeLimit Reason = "PartitionTimeLimit"
	ReasonBeginTime          Reason = "BeginTime"
	ReasonJobHeld            Reason = "JobHeld"
	ReasonNodeDown           Reason = "NodeDown"
	ReasonLaunchFailed       Reason = "LaunchFailed"
)

// JobSpec is what a user asks for. The CLI builds it from options and
// #SBATCH directives (package jobspec); ctld validates it again, because the
// socket is the trust boundary, not the CLI.
type JobSpec struct {
	Name      string   `json:"name"`
	Script    string   `json:"script"`         // the batch script's full text
	Args      []string `json:"args,omitempty"` // arguments after the script
	Partition string   `json:"partition,omitempty"`
	Nodes     int      `json:"nodes,omitempty"` // 0 means 1
	CPUs      int      `json:"cpus"`            // CPUs per node (cpus-per-task x tasks)
	MemBytes  int64    `json:"mem_bytes"`       // per node; 0 means the partition default
	ShmBytes  int64    `json:"shm_bytes,omitempty"`
	// TimeLimit in seconds; 0 means the partition's default.
	TimeLimit int64    `json:"time_limit_s,omitempty"`
	Output    string   `json:"output,omitempty"` // pattern, relative to WorkDir
	Error     string   `json:"error,omitempty"`  // pattern; empty means same as Output
	WorkDir   string   `json:"work_dir"`         // absolute
	Env       []string `json:"env,omitempty"`    // KEY=VALUE, the submitter's environment
}

// SubmitRequest is the body of POST /v1/jobs.
type SubmitRequest struct {
	Spec JobSpec `json:"spec"`
	// OnBehalfOf is honoured only when the caller is root (like sbatch --uid).
	OnBehalfOf *uint32 `json:"on_behalf_of,omitempty"`
}

// SubmitResponse answers a submit once the job is durably stored.
type SubmitResponse struct {
	JobID uint64 `json:"job_id"`
}

// Transition is one persisted state change.
type Transition struct {
	State  JobState  `json:"state"`
	Reason Reason    `json:"reason,omitempty"`
	Time   time.Time `json:"time"`
}

// Job is ctld's record of a job, as listed and shown.
type Job struct {
	ID        uint64   `json:"id"`
	Name      string   `json:"name"`
	User      string   `json:"user"`
	UID       uint32   `json:"uid"`
	GID       uint32   `json:"gid"`
	Groups    []uint32 `json:"groups,omitempty"`
	Partition string   `json:"partition"`
	State     JobState `json:"state"`
	Reason    Reason   `json:"reason"`
	Priority  int64    `json:"priority"`

	CPUs      int   `json:"cpus"`
	MemBytes  int64 `json:"mem_bytes"`
	NodeCount int   `json:"node_count"`
	TimeLimit int64 `json:"time_limit_s"`

	SubmitTime   time.Time  `json:"submit_time"`
	StartTime    *time.Time `json:"start_time"`
	EndTime      *time.Time `json:"end_time"`
	PlannedStart *time.Time `json:"planned_start,omitempty"`
	PlannedNodes []string   `json:"planned_nodes,omitempty"`

	Nodes    []string `json:"nodes"`
	ExitCode *int     `json:"exit_code"`
	Signal   int      `json:"signal,omitempty"`

	PeakMemBytes int64 `json:"peak_mem_bytes,omitempty"`
	CPUTimeUsec  int64 `json:"cpu_time_usec,omitempty"`
	// Message says why a job failed outside its own code (launch errors).
	Message string `json:"message,omitempty"`

	Spec    JobSpec      `json:"spec"`
	History []Transition `json:"history"`
}

// Elapsed is the job's run time so far (or in total, once ended).
func (j *Job) Elapsed(now time.Time) time.Duration {
	if j.StartTime == nil {
		return 0
	}
	end := now
	if j.EndTime != nil {
		end = *j.EndTime
	}
	if end.Before(*j.StartTime) {
		return 0
	}
	return end.Sub(*j.StartTime)
}

// CancelRequest is the body of POST /v1/jobs/cancel: explicit IDs and/or
// filters (all given filters must match). Users may only cancel their own.
type CancelRequest struct {
	IDs    []uint64   `json:"ids,omitempty"`
	User   string     `json:"user,omitempty"`
	States []JobState `json:"states,omitempty"`
	Name   string     `json:"name,omitempty"`
}

// CancelResponse lists what was cancelled and, per ID, why not.
type CancelResponse struct {
	Cancelled []uint64          `json:"cancelled"`
	Errors    map[uint64]string `json:"errors,omitempty"`
}

// JobFilter selects jobs for GET /v1/jobs (query: user, state, id; repeatable).
type JobFilter struct {
	Users  []string
	States []JobState
	IDs    []uint64
	// All includes finished jobs; by default listings show pending and running.
	All bool
}
