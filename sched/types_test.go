package sched

import (
	"slices"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

func TestStartInHostlistOrder(t *testing.T) {
	a, b := []gpu.Share{{Device: 1}}, []gpu.Share{{Device: 2}}
	st := Start{JobID: 7, Nodes: []string{"n10", "n2", "n1"}, GPUs: [][]gpu.Share{a, b, nil}}
	got := st.InHostlistOrder()
	if !slices.Equal(got.Nodes, []string{"n1", "n2", "n10"}) || got.JobID != 7 {
		t.Fatalf("nodes %v", got.Nodes)
	}
	if got.GPUs[0] != nil || got.GPUs[1][0].Device != 2 || got.GPUs[2][0].Device != 1 {
		t.Errorf("GPU shares did not follow their nodes: %+v", got.GPUs)
	}
	if st.Nodes[0] != "n10" {
		t.Error("the original start was changed")
	}
	if plain := (Start{Nodes: []string{"b", "a"}}).InHostlistOrder(); plain.GPUs != nil || plain.Nodes[0] != "a" {
		t.Errorf("without GPUs: %+v", plain)
	}
}
