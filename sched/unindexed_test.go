package sched

import (
	"testing"
	"time"
)

// TestUnindexedOnlyAlone: a node keeps no bounds only when every
// partition it is in has it alone; one shared with another node keeps
// its bounds, which its partition's tree reads.
func TestUnindexedOnlyAlone(t *testing.T) {
	s := Snapshot{
		Nodes: []Node{{Name: "a", Capacity: cpus(8), Up: true}, {Name: "b", Capacity: cpus(8), Up: true}, {Name: "c", Capacity: cpus(8), Up: true}},
		Partitions: []Partition{{Name: "solo", Nodes: []string{"a"}}, {Name: "pair", Nodes: []string{"b", "c"}},
			{Name: "solo-c", Nodes: []string{"c"}}},
		Now: T0, Running: []Running{{ID: 1, End: T0.Add(time.Hour), Alloc: []Allocation{{Node: "c", Resources: cpus(8)}}}},
	}
	got := map[string]bool{}
	for _, n := range newProfile(s, nil).nodes {
		got[n.name] = n.unindexed
		if n.name == "c" && n.tail[0] == 0 {
			t.Fatalf("c is full for an hour, but its bounds say a CPU is free now")
		}
	}
	if !got["a"] || got["b"] || got["c"] {
		t.Fatalf("unindexed = %v, want only a", got)
	}
}
