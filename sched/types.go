package sched

import (
	"sort"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/hostlist"
)

// Resources is an amount of each schedulable resource on one node.
type Resources struct {
	CPUs     int
	MemBytes int64
	// FGPU is in hundredths of a fractional-GPU unit (0.01 quantum).
	FGPU int
}

// Fits reports whether r fits within free.
func (r Resources) Fits(free Resources) bool {
	return r.CPUs <= free.CPUs && r.MemBytes <= free.MemBytes && r.FGPU <= free.FGPU
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{CPUs: r.CPUs + o.CPUs, MemBytes: r.MemBytes + o.MemBytes, FGPU: r.FGPU + o.FGPU}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{CPUs: r.CPUs - o.CPUs, MemBytes: r.MemBytes - o.MemBytes, FGPU: r.FGPU - o.FGPU}
}

// Node is one node's capacity and availability.
type Node struct {
	Name     string
	Capacity Resources
	Up       bool
	// GPUs are the node's devices, each worth FGPUPerGPU hundredths (0
	// means gpu.DefaultPerGPU). A node with devices places GPU requests
	// per device by package gpu's rules (gpu.Fits, gpu.Pack) and ignores
	// Capacity.FGPU; a node without them treats Capacity.FGPU as a plain
	// pool (whole GPUs count gpu.DefaultPerGPU each there).
	GPUs       []gpu.Device
	FGPUPerGPU gpu.Hundredths
}

// Partition names the nodes a job may use and its time limits.
type Partition struct {
	Name        string
	Nodes       []string
	DefaultTime time.Duration // used for jobs without a limit; 0 = unlimited
	MaxTime     time.Duration // 0 = unlimited
}

// Allocation is what a job holds on one node.
type Allocation struct {
	Node      string
	Resources Resources
	GPUs      []gpu.Share // its shares of the node's devices
}

// Running is a job that holds resources until End (start + time limit;
// the zero time means "unknown", planned as never ending).
type Running struct {
	ID    uint64
	Alloc []Allocation
	End   time.Time
	UID   uint32 // who it runs as: MPS fractions of two users never share a device
	// Groups count the job against Snapshot.GroupLimits while it runs.
	Groups []Member
	// Sharing is which jobs may run beside it on its nodes.
	Sharing Sharing
}

// Pending is a job waiting to start.
type Pending struct {
	ID        uint64
	Partition string
	NodeCount int       // 0 means 1
	PerNode   Resources // needed on each node
	TimeLimit time.Duration
	// Expected, if set and below the time limit, is how long the job is
	// expected to run (a prediction): backfill orders candidates by it,
	// but plans every job to its time limit, so no reservation ever rests
	// on a guess.
	Expected time.Duration
	Priority int64
	Submit   time.Time
	// Eligible is when the job's wait began (a release, a satisfied
	// dependency, a requeue); zero means Submit. Backfill.GuardAfter
	// counts a job's wait from it.
	Eligible time.Time
	// FairStart is the job's fair start as a plan returned it
	// (Plan.FairStarts); zero until one has.
	FairStart time.Time
	// Blocked, if set, keeps the job from being considered at all and is
	// reported as its reason (JobHeld, Dependency, BeginTime, PolicyLimit...).
	Blocked api.Reason
	// GPUs is whole physical GPUs per node, on top of PerNode.FGPU: on a
	// node whose GPUs are worth p hundredths each it needs GPUs x p.
	// GPUType limits the job's devices to the models it matches
	// (gpu.MatchesType); "" is any. UID is who the job runs as.
	GPUs    int
	GPUType string
	UID     uint32
	// Groups are the limited groups the job joins when it starts (an
	// array's %N, a singleton name, a policy's running limits). A start
	// that would take any of them past Snapshot.GroupLimits is not made:
	// the job waits with the reason of the first such group.
	Groups []Member
	// Allowed, when not nil, is the only nodes the job may run on: the
	// caller resolves its -w, -x and -C against the nodes. A node outside
	// it is never planned for the job, neither to start now nor in an
	// estimate; an empty set plans it nowhere.
	Allowed map[string]bool
	// Sharing is which jobs may run beside it (exclusive.go): a job that
	// shares with nobody starts only on nodes no job runs on, and nothing
	// is planned beside it while it runs.
	Sharing Sharing
}

// allows reports whether the job may run on the node called name.
func (p *Pending) allows(name string) bool { return p.Allowed == nil || p.Allowed[name] }

// Member is a job's part in a group: it counts Use towards the group's
// limit (1 for a job count, the job's CPUs for a CPU limit...).
type Member struct {
	Group string
	Use   int64
}

// GroupLimit caps what a group's members may hold at once. A pending
// member that would take the group past Max does not start and shows
// Reason; groups without a limit are not limited.
type GroupLimit struct {
	Max    int64
	Reason api.Reason
}

// Snapshot is everything the planner may look at.
type Snapshot struct {
	Now        time.Time
	Nodes      []Node
	Partitions []Partition
	Running    []Running
	Pending    []Pending
	// GroupLimits are the limits of the groups jobs name (Member.Group).
	GroupLimits map[string]GroupLimit
}

// Start tells the caller to start a job now on these nodes.
type Start struct {
	JobID uint64
	Nodes []string
	// GPUs are the job's shares of each node's devices, parallel to
	// Nodes; nil when the job holds no device.
	GPUs [][]gpu.Share
}

// InHostlistOrder is s with its nodes in Slurm's order (hostlist.Less)
// and their GPU shares kept with them: the first is the batch host, as in
// Slurm, whatever order the planner found the nodes in.
func (s Start) InHostlistOrder() Start {
	idx := make([]int, len(s.Nodes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return hostlist.Less(s.Nodes[idx[a]], s.Nodes[idx[b]]) })
	out := Start{JobID: s.JobID, Nodes: make([]string, len(s.Nodes))}
	if s.GPUs != nil {
		out.GPUs = make([][]gpu.Share, len(s.GPUs))
	}
	for to, from := range idx {
		out.Nodes[to] = s.Nodes[from]
		if s.GPUs != nil && from < len(s.GPUs) && to < len(out.GPUs) {
			out.GPUs[to] = s.GPUs[from]
		}
	}
	return out
}

// Estimate is the planner's word on a job that stays pending.
type Estimate struct {
	JobID  uint64
	Reason api.Reason
	// Start is the planned start time; zero when the planner cannot say
	// (blocked jobs, jobs beyond the planning depth).
	Start time.Time
	Nodes []string
	GPUs  [][]gpu.Share // the planned shares, as in Start
}

// Plan is the planner's output for one snapshot.
type Plan struct {
	Starts  []Start
	Pending []Estimate
	// FairStarts are the fair starts computed for jobs that had none
	// (Backfill.GuardFairStart), for the caller to keep.
	FairStarts []FairStart
	// Headroom is what a conservative plan with StartsOnly and no guard
	// left free from now; nil for every other plan.
	Headroom *Headroom
}

// Planner turns snapshots into plans.
type Planner interface {
	Plan(Snapshot) Plan
}

func reasonOf(s string) api.Reason { return api.Reason(s) }
