package api

import (
	"fmt"
	"time"
)

// JobState is the lifecycle state of a job, spelled as Slurm spells it.
type JobState string

const (
	StatePending JobState = "PENDING"
	StateRunning JobState = "RUNNING"
	// StateSuspended: an operator froze the running job (scontrol
	// suspend); it keeps its nodes, and its time limit's clock stops.
	StateSuspended   JobState = "SUSPENDED"
	StateCompleted   JobState = "COMPLETED"
	StateFailed      JobState = "FAILED"
	StateCancelled   JobState = "CANCELLED"
	StateTimeout     JobState = "TIMEOUT"
	StateOutOfMemory JobState = "OUT_OF_MEMORY"
	StateNodeFail    JobState = "NODE_FAIL"
	// StateRequeued ends a run that was requeued (see Job.Runs); no job is
	// ever in it, so it is not in AllStates.
	StateRequeued JobState = "REQUEUED"
)

// AllStates lists every state in lifecycle order.
var AllStates = []JobState{StatePending, StateRunning, StateSuspended, StateCompleted, StateFailed,
	StateCancelled, StateTimeout, StateOutOfMemory, StateNodeFail}

// Terminal reports whether a job in this state will never run again.
func (s JobState) Terminal() bool {
	return s != StatePending && s != StateRunning && s != StateSuspended && s != ""
}

// Holds reports whether a job in this state holds its nodes and has
// processes there: running, or suspended.
func (s JobState) Holds() bool { return s == StateRunning || s == StateSuspended }

// Short is the squeue-style two-letter code.
func (s JobState) Short() string {
	switch s {
	case StatePending:
		return "PD"
	case StateRunning:
		return "R"
	case StateSuspended:
		return "S"
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
	case StateRequeued:
		return "RQ"
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
	return "", fmt.Errorf("unknown job state %q (valid: PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL or their short codes)", s)
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
	// ReasonImagePull marks a RUNNING job whose node is still pulling its
	// image; queue shows it as CF (Slurm's CONFIGURING).
	ReasonImagePull Reason = "ImagePull"
	// ReasonDependencyNeverSatisfied: a job it depends on ended so that
	// the dependency can no longer hold (see JobSpec.KillOnInvalidDep).
	ReasonDependencyNeverSatisfied Reason = "DependencyNeverSatisfied"
	ReasonJobHeldAdmin             Reason = "JobHeldAdmin"      // held by root; only root releases it
	ReasonJobArrayTaskLimit        Reason = "JobArrayTaskLimit" // the array's %N tasks already run
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
	// SubmitHost is the submitting host's name (SLURM_SUBMIT_HOST); the
	// CLI sets it.
	SubmitHost string `json:"submit_host,omitempty"`

	// The fields below carry the rest of sbatch's options. Package jobspec
	// parses and validates them; a zero value always means "not asked for".
	// CPUs, MemBytes and Nodes above are already the per-node totals these
	// imply (see package jobspec for the rule), so a controller that knows
	// only those still allocates correctly.

	// TimeUnlimited is -t 0 or -t UNLIMITED: no limit of the job's own,
	// only the partition's MaxTime (TimeLimit is 0 then too, which alone
	// would mean the partition's DefaultTime).
	TimeUnlimited bool  `json:"time_unlimited,omitempty"`
	CPUsPerTask   int   `json:"cpus_per_task,omitempty"`     // -c as given
	Ntasks        int   `json:"ntasks,omitempty"`            // -n
	NtasksPerNode int   `json:"ntasks_per_node,omitempty"`   // --ntasks-per-node
	MemPerCPU     int64 `json:"mem_per_cpu_bytes,omitempty"` // --mem-per-cpu; MemBytes = MemPerCPU x CPUs
	MemPerGPU     int64 `json:"mem_per_gpu_bytes,omitempty"` // --mem-per-gpu; MemBytes = MemPerGPU x GPUs per node
	CPUsPerGPU    int   `json:"cpus_per_gpu,omitempty"`      // --cpus-per-gpu; CPUs = CPUsPerGPU x GPUs per node
	// Exclusive is --exclusive: "node" (the nodes to itself: no other job
	// on them, all their CPUs and GPUs allocated to it) or "user" (shared
	// only with the same user's jobs); "" shares. OverSubscribe is
	// -s/--oversubscribe, kept where the partition allows it (Slurm's
	// OverSubscribe=YES); corral never puts two jobs on one CPU.
	Exclusive     string `json:"exclusive,omitempty"`
	OverSubscribe bool   `json:"oversubscribe,omitempty"`
	// MemWholeNode is --mem=0: all of each node's memory (MemBytes is 0
	// here; the job's MemBytes is what it got once it starts).
	MemWholeNode bool   `json:"mem_whole_node,omitempty"`
	Constraint   string `json:"constraint,omitempty"` // -C node features, as written (&, |, [], *N)
	// NodeList is -w: the job runs on exactly these nodes (its node count
	// is at least their number). Exclude is -x: never on these. Both are
	// expanded host names.
	NodeList []string `json:"nodelist,omitempty"`
	Exclude  []string `json:"exclude,omitempty"`
	QOS      string   `json:"qos,omitempty"`
	Account  string   `json:"account,omitempty"`
	Comment  string   `json:"comment,omitempty"`

	Gres        []GresRequest `json:"gres,omitempty"`          // --gres, per node
	GPUs        []GresRequest `json:"gpus,omitempty"`          // -G/--gpus, for the whole job
	GPUsPerNode []GresRequest `json:"gpus_per_node,omitempty"` // --gpus-per-node
	GPUsPerTask []GresRequest `json:"gpus_per_task,omitempty"` // --gpus-per-task
	// FGPUHundredths is corral's --fgpu: fractional GPU per node, in
	// hundredths of an fGPU (0.5 fGPU is 50); see docs/gpu.md.
	FGPUHundredths int `json:"fgpu_hundredths,omitempty"`

	Array      *JobArray   `json:"array,omitempty"`      // -a/--array
	Dependency *Dependency `json:"dependency,omitempty"` // -d/--dependency
	// KillOnInvalidDep is --kill-on-invalid-dep: cancel the job when its
	// dependency can never be satisfied. nil: the cluster's default.
	KillOnInvalidDep *bool      `json:"kill_on_invalid_dep,omitempty"`
	Hold             bool       `json:"hold,omitempty"`  // -H: submit held (priority 0) until released
	Begin            *time.Time `json:"begin,omitempty"` // -b/--begin, resolved to an absolute time at submit
	// Nice is --nice: subtracted from the priority; negative only for root.
	Nice int `json:"nice,omitempty"`
	// Requeue is --requeue (true) or --no-requeue (false); nil: the
	// cluster's default.
	Requeue *bool      `json:"requeue,omitempty"`
	Export  *EnvExport `json:"export,omitempty"` // --export; nil means ALL
	// OpenMode is --open-mode: "append" or "truncate"; "" is the cluster's
	// default (truncate).
	OpenMode string     `json:"open_mode,omitempty"`
	Signal   *JobSignal `json:"signal,omitempty"` // --signal
	Input    string     `json:"input,omitempty"`  // -i: stdin pattern; "" means /dev/null

	// ContainerImage is corral's --container-image: an image reference
	// (name:tag, registry/name:tag or name@digest) to run the script in.
	ContainerImage string  `json:"container_image,omitempty"`
	Mounts         []Mount `json:"mounts,omitempty"` // corral's --mount, in order
	// Apps are corral's --app: web apps the job serves on its node, which
	// the dashboard proxies to their owner (api.App).
	Apps []App `json:"apps,omitempty"`

	// Umask is the submitter's file mode creation mask (SLURM_UMASK when
	// set, as sbatch), in four octal digits ("0027"); the job runs with it
	// and its output files are created under it. "": DefaultUmask.
	Umask string `json:"umask,omitempty"`

	// Allocation is a job of salloc or of srun outside an allocation: no
	// script; every node holds the allocation (RoleExtern) for steps, and
	// the job ends when its client releases it (AllocationRequest) or
	// stops renewing it.
	Allocation bool `json:"allocation,omitempty"`
}

// GresRequest is one generic resource: name[:type]:count (gpu:a100:2).
type GresRequest struct {
	Name  string `json:"name"`           // "gpu", ...
	Type  string `json:"type,omitempty"` // "a100"; "" means any type
	Count int64  `json:"count"`
}

// JobArray is --array: the task indexes to run and how many may run at
// once. Ranges are sorted and disjoint, so every index appears once.
type JobArray struct {
	Ranges []ArrayRange `json:"ranges"`
	// MaxRunning is the %N limit on tasks running at once; 0: no limit.
	MaxRunning int `json:"max_running,omitempty"`
}

// ArrayRange is First, First+Step, ... up to and including Last.
type ArrayRange struct {
	First int `json:"first"`
	Last  int `json:"last"`
	Step  int `json:"step"` // at least 1
}

// Count is the number of tasks in the array.
func (a *JobArray) Count() int {
	n := 0
	for _, r := range a.Ranges {
		if r.Step > 0 && r.Last >= r.First {
			n += (r.Last-r.First)/r.Step + 1
		}
	}
	return n
}

// Indexes lists every task index in ascending order.
func (a *JobArray) Indexes() []int {
	out := make([]int, 0, a.Count())
	for _, r := range a.Ranges {
		for i := r.First; r.Step > 0 && i <= r.Last; i += r.Step {
			out = append(out, i)
		}
	}
	return out
}

// DependencyType is one of sbatch's dependency kinds.
type DependencyType string

const (
	DependAfter      DependencyType = "after"      // the job started (plus Delay) or was cancelled
	DependAfterAny   DependencyType = "afterany"   // the job ended, however
	DependAfterOK    DependencyType = "afterok"    // the job ended with exit code 0
	DependAfterNotOK DependencyType = "afternotok" // the job ended in any failed state
	DependAfterCorr  DependencyType = "aftercorr"  // the same-index task of the array succeeded
	DependSingleton  DependencyType = "singleton"  // no other job of this name and user runs
)

// Dependency is --dependency: conditions joined by "," (all must hold)
// or by "?" (Any: one is enough).
type Dependency struct {
	Any        bool                  `json:"any,omitempty"`
	Conditions []DependencyCondition `json:"conditions"`
}

// DependencyCondition is one job a dependency waits for (or the
// singleton rule, which names no job).
type DependencyCondition struct {
	Type  DependencyType `json:"type"`
	JobID uint64         `json:"job_id,omitempty"`
	// ArrayTask is the task of an array job (123_4); nil means the whole
	// job, every task of it if it is an array.
	ArrayTask *int `json:"array_task,omitempty"`
	// Delay is after:ID+minutes, in seconds: how long after the start.
	Delay int64 `json:"delay_s,omitempty"`
}

// Export modes of EnvExport.
const (
	ExportAll  = "ALL"  // the submitter's whole environment, plus Vars
	ExportNone = "NONE" // only SLURM_*/CORRAL_* variables; the user's login environment is loaded on the node
	ExportNil  = "NIL"  // only SLURM_*/CORRAL_* variables, nothing loaded
	ExportList = "LIST" // only the variables in Vars (plus SLURM_*/CORRAL_*); login environment loaded
)

// EnvExport is --export: which variables of JobSpec.Env the job sees.
type EnvExport struct {
	Mode string `json:"mode"` // ExportAll, ExportNone, ExportNil or ExportList
	// Vars are NAME (take the submitter's value from Env) or NAME=value
	// entries, in the order given.
	Vars []string `json:"vars,omitempty"`
}

// JobSignal is --signal: send Signal this many seconds before the time
// limit.
type JobSignal struct {
	Signal int `json:"signal"`   // Linux signal number
	Before int `json:"before_s"` // seconds before the end, 0..65535
	// BatchOnly (B:) signals only the batch shell, not the job's other
	// processes.
	BatchOnly bool `json:"batch_only,omitempty"`
}

// Mount is one corral --mount: a host path bound into the job's container.
type Mount struct {
	Source   string `json:"source"` // absolute host path
	Target   string `json:"target"` // absolute path in the container
	ReadOnly bool   `json:"read_only,omitempty"`
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
	// Completing: the job has ended (State says how) or was requeued, but
	// a node has not yet said its part of that run is gone, and that part
	// still holds its share of the node: Slurm's COMPLETING (CG).
	// CompletingNodes are those nodes (squeue's NODELIST of a CG job).
	// The controller sets both on the jobs it lists; they are never
	// stored.
	Completing      bool     `json:"completing,omitempty"`
	CompletingNodes []string `json:"completing_nodes,omitempty"`

	CPUs      int   `json:"cpus"`
	MemBytes  int64 `json:"mem_bytes"`
	NodeCount int   `json:"node_count"`
	TimeLimit int64 `json:"time_limit_s"`

	SubmitTime time.Time  `json:"submit_time"`
	StartTime  *time.Time `json:"start_time"`
	// SuspendTime is when the job was last suspended or resumed (Slurm's
	// SuspendTime); SuspendedSecs how long its current run spent
	// suspended before its last resume: its time limit does not count them.
	SuspendTime   *time.Time `json:"suspend_time,omitempty"`
	SuspendedSecs int64      `json:"suspended_s,omitempty"`
	EndTime       *time.Time `json:"end_time"`
	PlannedStart  *time.Time `json:"planned_start,omitempty"`
	PlannedNodes  []string   `json:"planned_nodes,omitempty"`

	Nodes    []string `json:"nodes"`
	ExitCode *int     `json:"exit_code"`
	Signal   int      `json:"signal,omitempty"`

	PeakMemBytes int64 `json:"peak_mem_bytes,omitempty"`
	CPUTimeUsec  int64 `json:"cpu_time_usec,omitempty"`
	// Message says why a job failed outside its own code (launch errors).
	Message string `json:"message,omitempty"`
	// CancelledBy is the uid whose cancel ended the job (sacct's
	// "CANCELLED by UID"); nil when no one cancelled it.
	CancelledBy *uint32 `json:"cancelled_by,omitempty"`

	// GPUs per node, as the controller resolved the request: a fraction
	// (FGPUHundredths, from --fgpu) or whole devices (GPUs, from --gpus,
	// --gres=gpu, --gpus-per-node or --gpus-per-task), of the model
	// GPUType matches ("" any). GPUAlloc is what the job holds while it
	// runs, per node.
	FGPUHundredths int        `json:"fgpu_hundredths,omitempty"`
	GPUs           int        `json:"gpus,omitempty"`
	GPUType        string     `json:"gpu_type,omitempty"`
	GPUAlloc       []NodeGPUs `json:"gpu_alloc,omitempty"`

	// ArrayJobID is the array job a task belongs to (0 outside arrays):
	// task ArrayTaskID of array job 123 is shown as 123_4.
	ArrayJobID  uint64 `json:"array_job_id,omitempty"`
	ArrayTaskID *int   `json:"array_task_id,omitempty"`
	// ArrayTasks is set on the entry that stands for an array's tasks that
	// have not started yet, folded into one (123_[4-15%2]): the indexes in
	// --array syntax. Its ID is the lowest of those tasks' own job IDs.
	ArrayTasks string `json:"array_tasks,omitempty"`
	// Hold is "user" (--hold, corral hold) or "admin" (corral hold by
	// root, which only root may release); "" when not held.
	Hold string `json:"hold,omitempty"`
	// Restarts counts how often the job was requeued; Runs are its
	// earlier runs, oldest first.
	Restarts int      `json:"restarts,omitempty"`
	Runs     []JobRun `json:"runs,omitempty"`

	Spec    JobSpec      `json:"spec"`
	History []Transition `json:"history"`
	// Steps are the job's running steps, in a show of one job only
	// (GET /v1/jobs/{id}); listings leave them out.
	Steps []Step `json:"steps,omitempty"`
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
	d := end.Sub(*j.StartTime) - time.Duration(j.SuspendedSecs)*time.Second // suspended time is not run time
	if j.State == StateSuspended && j.SuspendTime != nil && end.After(*j.SuspendTime) {
		d -= end.Sub(*j.SuspendTime)
	}
	return max(d, 0)
}

// CancelRequest is the body of POST /v1/jobs/cancel: explicit IDs and/or
// filters (all given filters must match). Users may only cancel their own.
type CancelRequest struct {
	IDs    []uint64   `json:"ids,omitempty"`
	User   string     `json:"user,omitempty"`
	States []JobState `json:"states,omitempty"`
	Name   string     `json:"name,omitempty"`
	// Tasks are single tasks of array jobs (123_4); an ID in IDs that is
	// an array job cancels every task of it.
	Tasks []TaskRef `json:"tasks,omitempty"`
}

// CancelResponse lists what was cancelled and, per ID, why not. Both
// lists are bounded (the lowest MaxRefsPerRequest IDs cancelled, the
// first MaxListedErrors refusals); the counts are of all of them.
type CancelResponse struct {
	Cancelled      []uint64          `json:"cancelled"`
	CancelledCount int               `json:"cancelled_count"`
	Errors         map[uint64]string `json:"errors,omitempty"`
	ErrorCount     int               `json:"error_count,omitempty"`
	// Gone are the refused IDs that name no job, or jobs that had all
	// ended already (each also in Errors); GoneCount counts all of them.
	// Slurm's scancel, given only job IDs, passes over these in silence.
	Gone      []uint64 `json:"gone,omitempty"`
	GoneCount int      `json:"gone_count,omitempty"`
}

// JobFilter selects jobs for GET /v1/jobs (query: user, state, id; repeatable).
type JobFilter struct {
	Users  []string
	States []JobState
	IDs    []uint64
	// Tasks are array tasks (query id=123_4); an ID that is an array job
	// lists every task of it.
	Tasks []TaskRef
	// All includes finished jobs; by default listings show pending and running.
	All bool
	// WithSteps lists the jobs whose steps run, as squeue -s shows them:
	// the running jobs, and finished ones whose steps still wait for their
	// nodes' reports (as Slurm lists the steps of a completing job). It
	// takes no States and no All.
	WithSteps bool
	// Completing adds the jobs COMPLETING (Job.Completing) to States
	// (query completing=1); alone, it lists only them. A listing with
	// neither has them anyway, beside the pending and running ones.
	Completing bool
	// EndedSince, when set, leaves out finished jobs that ended before it
	// (query ended_since, RFC 3339): squeue shows a finished job only for
	// a while after its end, as slurmctld keeps one for MinJobAge.
	EndedSince time.Time
}

// MaxPageLimit bounds JobPage's per-state limit (GET /v1/jobs?limit=N).
const MaxPageLimit = 10000

// JobPage is a bounded listing (GET /v1/jobs?limit=N): of the jobs a
// listing would send, the newest N of each state, newest (highest ID)
// first, and how many of each state there are, listed or not. An array's
// pending tasks folded into one entry (123_[4-15]) count as one, as
// `corral queue` shows them. The dashboard's sessions tabs read it: what
// it costs grows with the jobs shown, not with the queue.
type JobPage struct {
	Jobs   []Job            `json:"jobs"`
	Counts map[JobState]int `json:"counts"`
}

// DisplayState is the job's squeue-style code, with Slurm's CF
// (CONFIGURING) for a running job whose node is still preparing it and
// CG (COMPLETING) for an ended job whose parts are still stopping.
func (j *Job) DisplayState() string {
	if j.State == StateRunning && j.Reason == ReasonImagePull {
		return "CF"
	}
	if j.Completing {
		return "CG"
	}
	return j.State.Short()
}

// JobBrief is the part of a Job that `corral queue`'s table shows, under
// Job's JSON names: what GET /v1/jobs?view=brief sends, about a fifth of
// a full record's bytes, so the biggest listings stay cheap to send and
// decode.
type JobBrief struct {
	ID              uint64     `json:"id"`
	Name            string     `json:"name"`
	User            string     `json:"user"`
	Partition       string     `json:"partition"`
	State           JobState   `json:"state"`
	Completing      bool       `json:"completing,omitempty"`
	CompletingNodes []string   `json:"completing_nodes,omitempty"`
	Reason          Reason     `json:"reason,omitempty"`
	NodeCount       int        `json:"node_count,omitempty"`
	StartTime       *time.Time `json:"start_time,omitempty"`
	EndTime         *time.Time `json:"end_time,omitempty"`
	SuspendTime     *time.Time `json:"suspend_time,omitempty"`
	SuspendedSecs   int64      `json:"suspended_s,omitempty"`
	Nodes           []string   `json:"nodes,omitempty"`
	FGPUHundredths  int        `json:"fgpu_hundredths,omitempty"`
	GPUs            int        `json:"gpus,omitempty"`
	GPUType         string     `json:"gpu_type,omitempty"`
	GPUAlloc        []NodeGPUs `json:"gpu_alloc,omitempty"`
	ArrayJobID      uint64     `json:"array_job_id,omitempty"`
	ArrayTaskID     *int       `json:"array_task_id,omitempty"`
	ArrayTasks      string     `json:"array_tasks,omitempty"`
	// Priority and Hold are squeue's default order (partition, state,
	// priority), so that squeue lists from this view.
	Priority int64  `json:"priority,omitempty"`
	Hold     string `json:"hold,omitempty"`
}

// BriefOf is j's brief view.
func BriefOf(j *Job) JobBrief {
	return JobBrief{ID: j.ID, Name: j.Name, User: j.User, Partition: j.Partition, State: j.State,
		Completing: j.Completing, CompletingNodes: j.CompletingNodes, Reason: j.Reason, NodeCount: j.NodeCount, StartTime: j.StartTime, EndTime: j.EndTime,
		SuspendTime: j.SuspendTime, SuspendedSecs: j.SuspendedSecs, Nodes: j.Nodes,
		FGPUHundredths: j.FGPUHundredths, GPUs: j.GPUs, GPUType: j.GPUType, GPUAlloc: j.GPUAlloc,
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, ArrayTasks: j.ArrayTasks,
		Priority: j.Priority, Hold: j.Hold}
}

// Job is the Job b stands for, its other fields zero.
func (b *JobBrief) Job() Job {
	return Job{ID: b.ID, Name: b.Name, User: b.User, Partition: b.Partition, State: b.State, Completing: b.Completing, CompletingNodes: b.CompletingNodes, Reason: b.Reason,
		NodeCount: b.NodeCount, StartTime: b.StartTime, EndTime: b.EndTime,
		SuspendTime: b.SuspendTime, SuspendedSecs: b.SuspendedSecs, Nodes: b.Nodes,
		FGPUHundredths: b.FGPUHundredths, GPUs: b.GPUs, GPUType: b.GPUType, GPUAlloc: b.GPUAlloc,
		ArrayJobID: b.ArrayJobID, ArrayTaskID: b.ArrayTaskID, ArrayTasks: b.ArrayTasks,
		Priority: b.Priority, Hold: b.Hold}
}
