package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sched"
)

// A node as listings show it.

// state is the node's state and its reason for listings, given what its
// running jobs (and parts still stopping) hold, whether it has any, and
// whether stopping parts are all it has.
func (n *node) state(a sched.Resources, running, onlyStopping bool) (api.NodeState, string) {
	switch {
	case !n.up && n.rec.Down:
		return api.NodeDown, n.rec.Drain
	case !n.up:
		return api.NodeDown, n.reason
	case n.rec.Drain != "" && running:
		return api.NodeDraining, n.rec.Drain
	case n.rec.Drain != "":
		return api.NodeDrained, n.rec.Drain
	case a.CPUs == 0 && a.MemBytes == 0:
		return api.NodeIdle, n.reason
	case onlyStopping:
		return api.NodeCompleting, n.reason
	case a.CPUs >= n.rec.CPUs || a.MemBytes >= n.rec.MemBytes:
		return api.NodeAllocated, n.reason
	default:
		return api.NodeMixed, n.reason
	}
}

// view is the node as listings show it, given what its running jobs
// and parts still stopping (ids, stopping of them the latter) hold of it;
// its GPUs are gpuView's.
func (n *node) view(name string, a sched.Resources, ids []uint64, stopping int) api.Node {
	st, reason := n.state(a, len(ids) > 0, stopping > 0 && stopping == len(ids))
	v := api.Node{Name: name, Addr: n.rec.Addr, State: st, Reason: reason,
		CPUs: n.rec.CPUs, MemBytes: n.rec.MemBytes, AllocCPUs: a.CPUs, AllocMemBytes: a.MemBytes,
		Partitions: append([]string{}, n.parts...), LastHeartbeat: n.rec.LastSeen, RunningJobs: ids,
		MountRoots: slices.Clone(n.rec.MountRoots)}
	if n.rec.Drain != "" {
		since := n.rec.DrainedSince
		v.DrainedSince = &since
	}
	return v
}

func (n *node) name() string { return n.rec.Name }

// declaredDown: an administrator set it DOWN (corral down); its runs are
// gone whatever it reports.
func (n *node) declaredDown() bool { return n.rec.Down }
