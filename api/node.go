package api

import "time"

// NodeState is how ctld sees a node daemon.
type NodeState string

const (
	NodeIdle      NodeState = "IDLE"      // up, nothing allocated
	NodeMixed     NodeState = "MIXED"     // up, partly allocated
	NodeAllocated NodeState = "ALLOCATED" // up, fully allocated
	NodeDown      NodeState = "DOWN"      // missed heartbeats or never registered
)

// Node is ctld's view of one node, as listed by `corral nodes`.
type Node struct {
	Name          string    `json:"name"`
	Addr          string    `json:"addr"`
	State         NodeState `json:"state"`
	Reason        string    `json:"reason,omitempty"`
	CPUs          int       `json:"cpus"`
	MemBytes      int64     `json:"mem_bytes"`
	AllocCPUs     int       `json:"alloc_cpus"`
	AllocMemBytes int64     `json:"alloc_mem_bytes"`
	Partitions    []string  `json:"partitions"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	RunningJobs   []uint64  `json:"running_jobs,omitempty"`
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
}

// SignalRequest asks noded to end a job (POST /v1/signal): SIGTERM, a grace
// period, then SIGKILL; the end is reported as CANCELLED.
type SignalRequest struct {
	JobID uint64 `json:"job_id"`
}

// ---- errors ----

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
}
