package api

import (
	"errors"
	"time"
)

// NodeState is how ctld sees a node daemon.
type NodeState string

const (
	NodeIdle      NodeState = "IDLE"      // up, nothing allocated
	NodeMixed     NodeState = "MIXED"     // up, partly allocated
	NodeAllocated NodeState = "ALLOCATED" // up, fully allocated
	// NodeCompleting: up, held only by parts of ended runs still stopping
	// there (docs/steps.md), as Slurm's COMPLETING.
	NodeCompleting NodeState = "COMPLETING"
	NodeDown       NodeState = "DOWN" // missed heartbeats or never registered
	// An administrator drained the node: it takes no new jobs; DRAINING
	// while jobs still run there, DRAINED once none do.
	NodeDraining NodeState = "DRAINING"
	NodeDrained  NodeState = "DRAINED"
)

// ClusterName is the name of the one cluster a controller runs:
// SLURM_CLUSTER_NAME in jobs, and what the Slurm commands' -M/--clusters
// may name.
const ClusterName = "corral"

// NodeNotResponding is the reason of a node DOWN because it missed its
// heartbeats (Slurm's NOT_RESPONDING flag: sinfo's down*).
const NodeNotResponding = "not responding"

// DrainRequest is POST /v1/nodes/drain: the nodes (names or hostlist
// expressions like n[01-04]) take no new jobs; running ones finish.
type DrainRequest struct {
	Nodes  []string `json:"nodes"`
	Reason string   `json:"reason"`
}

// DownRequest is POST /v1/nodes/down: the nodes are declared dead. Their
// running jobs end NODE_FAIL (or are requeued), may start elsewhere at
// once, and the nodes stay DOWN, whatever they report, until resumed.
type DownRequest = DrainRequest

// ResumeRequest is POST /v1/nodes/resume: drained or downed nodes take
// jobs again.
type ResumeRequest struct {
	Nodes []string `json:"nodes"`
}

// NodesResponse names the nodes a drain, down or resume changed, in order.
type NodesResponse struct {
	Nodes []string `json:"nodes"`
}

// Node is ctld's view of one node, as listed by `corral nodes`.
type Node struct {
	Name          string    `json:"name"`
	Addr          string    `json:"addr"`
	State         NodeState `json:"state"`
	Reason        string    `json:"reason,omitempty"` // why DOWN, or the drain's reason
	CPUs          int       `json:"cpus"`
	MemBytes      int64     `json:"mem_bytes"`
	AllocCPUs     int       `json:"alloc_cpus"`
	AllocMemBytes int64     `json:"alloc_mem_bytes"`
	Partitions    []string  `json:"partitions"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	RunningJobs   []uint64  `json:"running_jobs,omitempty"`
	// Completing: a part of an ended run is still stopping there
	// (Slurm's COMPLETING flag, on top of the state); the state is
	// NodeCompleting when such parts are all it holds.
	Completing bool `json:"completing,omitempty"`
	// fGPU of the node in hundredths: total, allocated, and what one of
	// its GPUs is worth (fgpu_per_gpu); GPUs lists its devices.
	FGPUHundredths       int       `json:"fgpu_hundredths,omitempty"`
	AllocFGPUHundredths  int       `json:"alloc_fgpu_hundredths,omitempty"`
	FGPUPerGPUHundredths int       `json:"fgpu_per_gpu_hundredths,omitempty"`
	GPUs                 []NodeGPU `json:"gpus,omitempty"`
	// DrainedSince is when the node was drained (nil: it is not).
	DrainedSince *time.Time `json:"drained_since,omitempty"`
	// Features are the node's features (corral.conf's NodeName lines),
	// which -C/--constraint matches.
	Features []string `json:"features,omitempty"`
	// MountRoots are its --mount-root directories, under which a job's
	// --mount sources must lie (the dashboard offers them).
	MountRoots []string `json:"mount_roots,omitempty"`
}

// Partition groups nodes with time limits, from ctld's config file.
type Partition struct {
	Name        string   `json:"name"`
	Nodes       []string `json:"nodes"` // node names; empty with AllNodes
	AllNodes    bool     `json:"all_nodes,omitempty"`
	Default     bool     `json:"default,omitempty"`
	DefaultTime int64    `json:"default_time_s"` // seconds; 0 = unlimited
	MaxTime     int64    `json:"max_time_s"`     // seconds; 0 = unlimited
	// DefaultMemPerCPU is used when a job gives no --mem (bytes per CPU).
	DefaultMemPerCPU int64 `json:"default_mem_per_cpu,omitempty"`
	// FGPUPerGPUHundredths is FGPUPerGPU=: what one GPU of the
	// partition's nodes is worth, for nodes that do not say (0: 1 fGPU).
	FGPUPerGPUHundredths int `json:"fgpu_per_gpu_hundredths,omitempty"`
	// OverSubscribe is OverSubscribe=: "NO" ("" too: jobs share a node's
	// unused CPUs, --exclusive is honoured, -s is not), "YES" (as NO, and
	// -s is kept) or "EXCLUSIVE" (every job gets whole nodes).
	OverSubscribe string `json:"oversubscribe,omitempty"`
}

// ---- node plane: noded -> ctld ----

// RegisterRequest is sent by noded at start and as its heartbeat
// (POST /v1/node/register). Re-sending it is always safe.
type RegisterRequest struct {
	Name     string `json:"name"`
	Addr     string `json:"addr"` // host:port where noded serves the node plane
	CPUs     int    `json:"cpus"`
	MemBytes int64  `json:"mem_bytes"`
	// Running lists the jobs noded is running (or whose end it has not yet
	// had acknowledged), so ctld can reconcile after either side restarts.
	Running []uint64 `json:"running"`
	// BootID changes when noded restarts; ctld logs it.
	BootID string `json:"boot_id"`
	// GPUs are the node's devices; FGPUPerGPUHundredths is its
	// --fgpu-per-gpu (0: not set, the controller's default applies).
	GPUs                 []GPU `json:"gpus,omitempty"`
	FGPUPerGPUHundredths int   `json:"fgpu_per_gpu_hundredths,omitempty"`
	// MountRoots are its --mount-root directories: ctld refuses at submit
	// a --mount that no node of the job's partition allows.
	MountRoots []string `json:"mount_roots,omitempty"`
}

// RegisterResponse tells noded which of its jobs ctld no longer wants.
type RegisterResponse struct {
	HeartbeatInterval int64    `json:"heartbeat_interval_ms"`
	Kill              []uint64 `json:"kill,omitempty"`
}

// JobEventKind is what happened to a job on a node.
type JobEventKind string

const (
	EventStarted JobEventKind = "started"
	EventEnded   JobEventKind = "ended"
	// EventConfiguring: the node is preparing the job before its script
	// runs (pulling its image); Message says what. EventStarted ends it.
	EventConfiguring JobEventKind = "configuring"
)

// JobEvent reports a start or an end (POST /v1/node/events). noded keeps an
// event until ctld acknowledges it, so delivery is at least once; ctld
// applies each event idempotently.
type JobEvent struct {
	JobID uint64       `json:"job_id"`
	Node  string       `json:"node"`
	Kind  JobEventKind `json:"kind"`
	Time  time.Time    `json:"time"`
	// For EventEnded:
	State        JobState `json:"state,omitempty"` // COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY
	ExitCode     int      `json:"exit_code"`
	Signal       int      `json:"signal,omitempty"`
	PeakMemBytes int64    `json:"peak_mem_bytes,omitempty"`
	CPUTimeUsec  int64    `json:"cpu_time_usec,omitempty"`
	Message      string   `json:"message,omitempty"` // why a launch failed, etc.
	// StepID names the step of an EventStepEnded.
	StepID int `json:"step_id,omitempty"`
}

// EventsRequest carries a batch of events.
type EventsRequest struct {
	Events []JobEvent `json:"events"`
}

// ---- node plane: ctld -> noded ----

// LaunchRequest tells noded to run a job (POST /v1/launch). Everything noded
// needs is here: noded keeps no user database and trusts only ctld.
type LaunchRequest struct {
	JobID     uint64   `json:"job_id"`
	Name      string   `json:"name"`
	Partition string   `json:"partition"`
	User      string   `json:"user"`
	UID       uint32   `json:"uid"`
	GID       uint32   `json:"gid"`
	Groups    []uint32 `json:"groups,omitempty"`
	Home      string   `json:"home"`
	Script    string   `json:"script"`
	Args      []string `json:"args,omitempty"`
	WorkDir   string   `json:"work_dir"`
	Env       []string `json:"env,omitempty"`
	CPUs      int      `json:"cpus"`
	MemBytes  int64    `json:"mem_bytes"`
	ShmBytes  int64    `json:"shm_bytes"`
	TimeLimit int64    `json:"time_limit_s"` // 0 = none
	Output    string   `json:"output"`       // pattern (%j %x %u %N %%), relative to WorkDir
	Error     string   `json:"error"`        // pattern; empty = same file as Output
	NodeList  []string `json:"node_list"`

	// Array is set for a task of an array job.
	Array *LaunchArray `json:"array,omitempty"`
	// Restarts is how often the job was requeued before this run (%r,
	// SLURM_RESTART_COUNT); a requeued job appends to its output files
	// unless OpenMode is "truncate".
	Restarts int `json:"restarts,omitempty"`
	// Start is the run's start time in the controller. With JobID it
	// names one run: a launch of a run that already ended on the node
	// (a repeat whose first answer was lost) is told apart from a new
	// run, which has a new start (a requeue, a retry after a failed
	// launch). Zero from a controller that does not send it.
	Start    time.Time  `json:"start,omitzero"`
	Export   *EnvExport `json:"export,omitempty"`    // --export; nil means ALL
	OpenMode string     `json:"open_mode,omitempty"` // "append", "truncate" or "" (truncate)
	Signal   *JobSignal `json:"signal,omitempty"`    // --signal: sent Before seconds before TimeLimit
	Input    string     `json:"input,omitempty"`     // stdin pattern, opened as the user; "" is /dev/null

	// GPUs are the job's shares of this node's devices, each device
	// worth FGPUPerGPUHundredths.
	GPUs                 []GPUShare `json:"gpus,omitempty"`
	FGPUPerGPUHundredths int        `json:"fgpu_per_gpu_hundredths,omitempty"`

	// Image is JobSpec.ContainerImage: the node runs the script in that
	// image from its local store; "" is the read-only host view.
	Image string `json:"image,omitempty"`
	// Mounts are the job's --mount binds; the node checks each as the
	// user against its allowed roots.
	Mounts []Mount `json:"mounts,omitempty"`
	// Apps are JobSpec.Apps: the node exports where they are served and
	// tunnels the dashboard to their ports alone.
	Apps []App `json:"apps,omitempty"`
	// Umask is JobSpec.Umask ("": DefaultUmask).
	Umask string `json:"umask,omitempty"`

	// The job runs on every node of NodeList (job steps, docs/steps.md).
	// Role says what this node does: RoleBatch ("" too) runs the script,
	// RoleExtern only holds the allocation (the container, its cgroup,
	// /tmp and mounts) for steps. NodeIndex is this node's index in
	// NodeList (the job's SLURM_NODEID is its index in NodeList's
	// hostlist order, the order SLURM_JOB_NODELIST prints).
	Role      string `json:"role,omitempty"`
	NodeIndex int    `json:"node_index,omitempty"`
	// The batch environment's task layout, as sbatch was given it; zero
	// values are "not given". TasksPerNode and CPUsPerNode are aligned
	// with NodeList.
	Ntasks        int    `json:"ntasks,omitempty"`
	NtasksPerNode int    `json:"ntasks_per_node,omitempty"`
	CPUsPerTask   int    `json:"cpus_per_task,omitempty"`
	TasksPerNode  []int  `json:"tasks_per_node,omitempty"`
	CPUsPerNode   []int  `json:"cpus_per_node,omitempty"`
	SubmitHost    string `json:"submit_host,omitempty"`
	ClusterName   string `json:"cluster_name,omitempty"`
}

// LaunchRequest.Role values.
const (
	RoleBatch  = "batch"
	RoleExtern = "extern"
)

// LaunchArray describes the array a launched task belongs to, for its
// SLURM_ARRAY_* variables and the %A and %a patterns.
type LaunchArray struct {
	JobID     uint64 `json:"job_id"` // the array job ID (%A)
	TaskID    int    `json:"task_id"`
	TaskCount int    `json:"task_count"`
	TaskMin   int    `json:"task_min"`
	TaskMax   int    `json:"task_max"`
	// TaskStep is the distance between indexes when they are equally
	// spaced (0-15:4 has 4), else 1.
	TaskStep int `json:"task_step"`
}

// SignalRequest asks noded to end a job (POST /v1/signal): SIGTERM, a grace
// period, then SIGKILL; the end is reported as CANCELLED.
type SignalRequest struct {
	JobID uint64 `json:"job_id"`
}

// MaxLaunchBytes bounds a node-plane request to noded (a launch carries
// a whole script and environment). ctld fails a job whose launch would be
// larger instead of sending it.
const MaxLaunchBytes = 4 << 20

// ---- errors ----

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
	// Kind says whose fault a refusal is, where the caller acts on it;
	// "" for most errors.
	Kind ErrorKind `json:"kind,omitempty"`
}

// ErrorKind classifies a refusal.
type ErrorKind string

// KindJobRefused: noded refuses a launch for the job's own reasons (its
// request, which no retry or other node state would change). ctld fails
// the job and leaves the node up. Any other launch error is the node's
// fault: the job goes back to PENDING and the node is held DOWN a while.
const KindJobRefused ErrorKind = "job_refused"

// JobRefused tells whether err is a launch refusal of KindJobRefused.
func JobRefused(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Kind == KindJobRefused
}

// AllocSample is the cluster's allocation at one moment: allocated and
// total CPUs, memory and fGPU (hundredths) over all nodes.
type AllocSample struct {
	Time                time.Time `json:"time"`
	AllocCPUs           int       `json:"alloc_cpus"`
	CPUs                int       `json:"cpus"`
	AllocMemBytes       int64     `json:"alloc_mem_bytes"`
	MemBytes            int64     `json:"mem_bytes"`
	AllocFGPUHundredths int       `json:"alloc_fgpu_hundredths"`
	FGPUHundredths      int       `json:"fgpu_hundredths"`
}

// AllocHistory is GET /v1/admin/allocation: the controller's recent
// allocation samples, oldest first, one every EveryS seconds (a day of
// them at most, kept in memory: a restart starts a new history).
type AllocHistory struct {
	EveryS  int64         `json:"every_s"`
	Samples []AllocSample `json:"samples"`
}
