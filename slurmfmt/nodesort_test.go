package slurmfmt

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestSortNodeGroups(t *testing.T) {
	batch := &api.Partition{Name: "batch", Default: true}
	gpu := &api.Partition{Name: "gpu"}
	node := func(name string, state api.NodeState, memMB int64) *api.Node {
		return &api.Node{Name: name, State: state, CPUs: 4, MemBytes: memMB << 20}
	}
	groups := func() []NodeGroup {
		return []NodeGroup{
			{Part: batch, Nodes: []*api.Node{node("dev10", api.NodeIdle, 100)}},
			{Part: batch, Nodes: []*api.Node{node("dev2", api.NodeDrained, 20)}},
			{Part: gpu, Nodes: []*api.Node{node("dev3", api.NodeMixed, 300)}},
			{Part: batch, Nodes: []*api.Node{node("dev1", api.NodeMixed, 100)}},
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"N", "dev1 dev2 dev3 dev10"}, // host order, not text order
		{"-N", "dev10 dev3 dev2 dev1"},
		{"-t", "dev2 dev3 dev1 dev10"},   // drained (a flag) above mixed above idle
		{"m", "dev2 dev10 dev1 dev3"},    // memory as numbers, stable among equals
		{"-m,N", "dev3 dev1 dev10 dev2"}, // the first key decides first
		{"P,-t", "dev2 dev1 dev10 dev3"},
		{"#P,x", "dev10 dev2 dev3 dev1"}, // configured order; unknown letters skipped
	} {
		g := groups()
		SortNodeGroups(g, c.spec, &Env{Now: testNow})
		var got []string
		for _, x := range g {
			got = append(got, x.Nodes[0].Name)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("-S %s: %v, want %s", c.spec, got, c.want)
		}
	}
}
