package cli

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func fixtureNodes() []api.Node {
	return []api.Node{
		{Name: "dev2", State: api.NodeIdle, CPUs: 4, MemBytes: 8 << 30, Partitions: []string{"batch"}},
		{Name: "dev1", State: api.NodeMixed, CPUs: 2, MemBytes: 4 << 30, AllocCPUs: 1, AllocMemBytes: 1 << 30,
			Partitions: []string{"batch", "gpu"}, RunningJobs: []uint64{3}},
	}
}

func TestNodesTable(t *testing.T) {
	f := MustFakeCtld(t)
	f.nodes = fixtureNodes()
	r := f.run("nodes")
	want := "NODE  STATE  CPUS(A/T)  MEMORY(A/T)  PARTITIONS\n" +
		"dev1  mixed  1/2        1.0G/4.0G    batch,gpu\n" +
		"dev2  idle   0/4        0/8.0G       batch\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("got exit %d:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}

	f.nodes = append(f.nodes, api.Node{Name: "dev3", State: api.NodeDown, Reason: "not responding", CPUs: 1, MemBytes: 1 << 30})
	r = f.run("nodes")
	want = "NODE  STATE  CPUS(A/T)  MEMORY(A/T)  PARTITIONS  REASON\n" +
		"dev1  mixed  1/2        1.0G/4.0G    batch,gpu\n" +
		"dev2  idle   0/4        0/8.0G       batch\n" +
		"dev3  down   0/1        0/1.0G       -           not responding\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("with a down node, got:\n%s\nwant:\n%s", r.stdout, want)
	}
}

func TestNodesJSON(t *testing.T) {
	f := MustFakeCtld(t)
	f.nodes = fixtureNodes()
	r := f.run("nodes", "--json")
	var got []api.Node
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	want := []api.Node{fixtureNodes()[1], fixtureNodes()[0]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if r := (MustFakeCtld(t)).run("nodes", "--json"); r.stdout != "[]\n" {
		t.Errorf("no nodes: %q", r.stdout)
	}
}
