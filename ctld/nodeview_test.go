package ctld

import (
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/sched"
)

// A node's state comes from its running jobs alone, as Slurm's does;
// parts of ended runs still stopping there are the completing flag on
// top, and a node they alone hold is COMPLETING. Their CPUs count as
// allocated either way: the planner gives them to no one.
func TestNodeViewStateAndCompletingFlag(t *testing.T) {
	const gib = int64(1) << 30
	cpus := func(n int) sched.Resources { return sched.Resources{CPUs: n, MemBytes: int64(n) * gib} }
	for _, tc := range []struct {
		name              string
		drain             string
		alloc, stop       sched.Resources
		running, stopping int
		want              api.NodeState
		completing        bool
	}{
		{"idle", "", cpus(0), cpus(0), 0, 0, api.NodeIdle, false},
		{"a job on part of it", "", cpus(1), cpus(0), 1, 0, api.NodeMixed, false},
		{"a part stopping alone", "", cpus(2), cpus(2), 0, 1, api.NodeCompleting, true},
		{"a job and a part that would fill it", "", cpus(4), cpus(2), 1, 1, api.NodeMixed, true},
		{"jobs filling it and a part", "", cpus(4), cpus(0), 2, 1, api.NodeAllocated, true},
		{"draining with a part stopping", "maintenance", cpus(2), cpus(2), 0, 1, api.NodeDraining, true},
		{"drained", "maintenance", cpus(0), cpus(0), 0, 0, api.NodeDrained, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{rec: store.NodeRecord{Name: "n1", CPUs: 4, MemBytes: 4 * gib, Drain: tc.drain}, up: true}
			ids := make([]uint64, tc.running+tc.stopping)
			for i := range ids {
				ids[i] = uint64(i + 1)
			}
			v := n.view("n1", tc.alloc, tc.stop, ids, tc.stopping)
			if v.State != tc.want || v.Completing != tc.completing || v.AllocCPUs != tc.alloc.CPUs {
				t.Errorf("state %s completing=%v, %d CPUs allocated; want %s completing=%v, %d", v.State, v.Completing, v.AllocCPUs,
					tc.want, tc.completing, tc.alloc.CPUs)
			}
		})
	}
	down := &node{rec: store.NodeRecord{Name: "n2", CPUs: 4, MemBytes: 4 * gib}, reason: reasonNotResponding}
	if v := down.view("n2", cpus(2), cpus(2), []uint64{7}, 1); v.State != api.NodeDown || v.Completing {
		t.Errorf("a DOWN node with a part: %s completing=%v, want DOWN without the flag", v.State, v.Completing)
	}
}
