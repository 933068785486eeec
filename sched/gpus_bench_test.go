package sched

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

// gpuBenchSnapshot is benchSnapshot with 8 A100s (2 fGPU each) on every
// node and about 40% of the queue asking for GPUs: a third fractions
// (0.25 to 1.5 fGPU), the rest 1, 2, 4 or 8 whole GPUs; running jobs hold
// fractions of half the devices.
func gpuBenchSnapshot(nodes, pending int, seed int64) Snapshot {
	s := benchSnapshot(nodes, pending, seed)
	rng := rand.New(rand.NewSource(seed))
	held := map[string][]gpu.Holding{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.GPUs, n.FGPUPerGPU = a100s(8), 200
		n.Capacity.FGPU = int(gpu.NodeCapacity(n.GPUs, 200))
	}
	for i := range s.Running {
		r := &s.Running[i]
		a := &r.Alloc[0]
		r.UID = uint32(1000 + rng.Intn(20))
		if rng.Intn(3) != 0 {
			continue
		}
		var n *Node
		for k := range s.Nodes {
			if s.Nodes[k].Name == a.Node {
				n = &s.Nodes[k]
			}
		}
		view := gpu.FreeOf(n.GPUs, held[a.Node], 200)
		if sh, ok := gpu.Pack(view, gpu.Request{Amount: gpu.Hundredths(25 * (1 + rng.Intn(8))), UID: r.UID}, 200); ok {
			a.GPUs = sh
			for _, x := range sh {
				held[a.Node] = append(held[a.Node], gpu.Holding{UID: r.UID, Share: x})
			}
		}
	}
	for i := range s.Pending {
		j := &s.Pending[i]
		j.UID = uint32(1000 + rng.Intn(20))
		switch rng.Intn(15) {
		case 0, 1:
			j.PerNode.FGPU = 25 * (1 + rng.Intn(6))
		case 2, 3, 4:
			j.GPUs = []int{1, 2, 4, 8}[rng.Intn(4)]
		}
	}
	return s
}

// BenchmarkPlanGPUs plans a GPU cluster conservatively. Run:
//
//	go test ./sched -run '^$' -bench 'BenchmarkPlanGPUs' -benchtime 3x
func BenchmarkPlanGPUs(b *testing.B) {
	for _, c := range []struct{ nodes, pending int }{{100, 2000}, {1000, 10000}} {
		s := gpuBenchSnapshot(c.nodes, c.pending, 1)
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", c.nodes, c.pending), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Backfill{}.Plan(s)
			}
		})
	}
}

// The bench snapshot is a valid plan input: its plan keeps every device rule.
func TestGPUBenchSnapshotPlans(t *testing.T) {
	s := gpuBenchSnapshot(20, 300, 2)
	h := &Harness{t: t, Snap: s}
	v := h.Plan(Backfill{})
	if len(v.Starts)+len(v.Pending) != 300 || len(v.Starts) == 0 {
		t.Fatalf("plan covers %d of 300 jobs, %d start", len(v.Starts)+len(v.Pending), len(v.Starts))
	}
}
