package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sched"
)

// A node as listings show it.

// state is the node's state and its reason for listings, given what its
// running jobs hold (run), whether any job runs there (running) and
// whether a part of an ended run still stops there (stopping). As in
// Slurm, the state comes from the running jobs alone: stopping parts are
// a flag on top (api.Node.Completing), and a node they alone hold is
// NodeCompleting (Slurm's IDLE+COMPLETING).
func (n *node) state(run sched.Resources, running, stopping bool) (api.NodeState, string) {
	switch {
	case !n.up && n.rec.Down:
		return api.NodeDown, n.rec.Drain
	case !n.up:
		return api.NodeDown, n.reason
	case n.rec.Drain != "" && (running || stopping):
		return api.NodeDraining, n.rec.Drain
	case n.rec.Drain != "":
		return api.NodeDrained, n.rec.Drain
	case !running && stopping:
		return api.NodeCompleting, n.reason
	case run.CPUs == 0 && run.MemBytes == 0:
		return api.NodeIdle, n.reason
	case run.CPUs >= n.rec.CPUs || run.MemBytes >= n.rec.MemBytes:
		return api.NodeAllocated, n.reason
	default:
		return api.NodeMixed, n.reason
	}
}

// view is the node as listings show it, given what its running jobs
// and parts still stopping hold of it (a), what the stopping parts
// alone hold (stop), and the jobs on it (ids, stopping of them by their
// parts); its GPUs are gpuView's.
func (n *node) view(name string, a, stop sched.Resources, ids []uint64, stopping int) api.Node {
	st, reason := n.state(a.Sub(stop), len(ids) > stopping, stopping > 0)
	v := api.Node{Name: name, Addr: n.rec.Addr, State: st, Reason: reason,
		CPUs: n.rec.CPUs, MemBytes: n.rec.MemBytes, AllocCPUs: a.CPUs, AllocMemBytes: a.MemBytes,
		Partitions: append([]string{}, n.parts...), LastHeartbeat: n.rec.LastSeen, RunningJobs: ids,
		MountRoots: slices.Clone(n.rec.MountRoots), Completing: stopping > 0 && st != api.NodeDown}
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
