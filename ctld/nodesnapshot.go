package ctld

import "github.com/corral-hpc/corral/sched"

// The node registry's side of a scheduling snapshot. The caller holds
// Server.mu (read at least).

// schedNodes is every node as the planner sees it: its capacity, its
// GPUs, and whether it takes jobs (up and not drained). They come in
// hostlist order: the planner breaks ties by a node's position, so two
// snapshots of one state (a cycle and --test-only) must list the nodes
// alike, which a map walk does not.
func (r *nodeRegistry) schedNodes(parts partitions) []sched.Node {
	out := make([]sched.Node, 0, len(r.names))
	for _, name := range r.names {
		n := r.byName[name]
		out = append(out, sched.Node{Name: name,
			Capacity: sched.Resources{CPUs: n.rec.CPUs, MemBytes: n.rec.MemBytes}, Up: n.up && n.rec.Drain == ""})
		n.addGPUsTo(&out[len(out)-1], parts)
	}
	return out
}

// freeCPUs is the free CPUs of each partition's nodes that are up, given
// alloc, what is allocated on each node.
func (r *nodeRegistry) freeCPUs(alloc map[string]sched.Resources) map[string]int {
	free := make(map[string]int)
	for name, n := range r.byName {
		if n.up {
			for _, p := range n.parts {
				free[p] += max(n.rec.CPUs-alloc[name].CPUs, 0)
			}
		}
	}
	return free
}
