package sched

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Placement: a job limited to some nodes (-w, -x, -C, resolved by the
// caller into Pending.Allowed) is planned only there, now and in its
// estimate, by every planner.
func TestAllowedNodes(t *testing.T) {
	nodes := func() []Node {
		return []Node{MakeNode("n1").CPUs(4).Obj(), MakeNode("n2").CPUs(4).Obj(), MakeNode("n3").CPUs(4).Obj()}
	}
	for name, pl := range allPlanners {
		t.Run(name, func(t *testing.T) {
			// -x n1: the first, emptiest node is skipped.
			v := NewHarness(t, nodes()...).Pending(MakeJob(1).Only("n2", "n3").Obj()).Plan(pl)
			v.MustStart(1, "n2")

			// -w n3: there, though n1 and n2 are free.
			v = NewHarness(t, nodes()...).Pending(MakeJob(1).Only("n3").Obj()).Plan(pl)
			v.MustStart(1, "n3")

			// -w n1,n3 with two nodes: exactly those.
			v = NewHarness(t, nodes()...).Pending(MakeJob(1).Nodes(2).Only("n1", "n3").Obj()).Plan(pl)
			v.MustStart(1, "n1", "n3")

			// The allowed node is full: the job waits though others are idle.
			v = NewHarness(t, nodes()...).
				Running(MakeRunning(100).On("n1", 4).Ends(time.Hour).Obj()).
				Pending(MakeJob(1).Only("n1").Obj()).Plan(pl)
			if _, ok := name2start(v, 1); ok {
				t.Fatalf("job limited to a full node started: %s", v)
			}
			if name != "firstfit" {
				e := v.MustWait(1, api.ReasonResources, time.Hour)
				if len(e.Nodes) != 1 || e.Nodes[0] != "n1" {
					t.Fatalf("estimate on %v, want n1", e.Nodes)
				}
			}

			// An empty set: planned nowhere, and it holds nobody up.
			v = NewHarness(t, nodes()...).
				Pending(MakeJob(1).Prio(9).Only().Obj(), MakeJob(2).Obj()).Plan(pl)
			if _, ok := name2start(v, 1); ok {
				t.Fatalf("job allowed nowhere started: %s", v)
			}
			v.MustStart(2)
		})
	}
}

func name2start(v *PlanView, id uint64) ([]string, bool) {
	for _, s := range v.Starts {
		if s.JobID == id {
			return s.Nodes, true
		}
	}
	return nil, false
}
