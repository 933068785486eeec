package cli

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
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

// nodeAdminRoutes answers drain and resume as ctld does: the changed
// nodes, 404 for an unknown one; resume finds nothing drained.
func (f *fakeCtld) nodeAdminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/nodes/drain", func(w http.ResponseWriter, r *http.Request) {
		var req api.DrainRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			reply(w, 400, api.Error{Error: err.Error()})
			return
		}
		if slices.Contains(req.Nodes, "nope") {
			reply(w, 404, api.Error{Error: "drain: no node nope (nothing changed)"})
			return
		}
		reply(w, 200, api.NodesResponse{Nodes: req.Nodes})
	})
	mux.HandleFunc("POST /v1/nodes/down", func(w http.ResponseWriter, r *http.Request) {
		var req api.DownRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Reason == "" {
			reply(w, 400, api.Error{Error: "bad down request"})
			return
		}
		reply(w, 200, api.NodesResponse{Nodes: req.Nodes})
	})
	mux.HandleFunc("POST /v1/nodes/resume", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, api.NodesResponse{Nodes: []string{}})
	})
}

func TestNodesDrainResume(t *testing.T) {
	f := MustFakeCtld(t)
	r := f.run("nodes", "drain", "dev1", "dev[2-3]", "--reason", "new disks")
	if r.code != 0 || r.stdout != "drained dev1 dev[2-3]\n" {
		t.Fatalf("drain: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	var req api.DrainRequest
	if err := json.Unmarshal(f.MustOneRequest(t).Body, &req); err != nil || req.Reason != "new disks" ||
		!slices.Equal(req.Nodes, []string{"dev1", "dev[2-3]"}) {
		t.Errorf("drain request %+v, %v", req, err)
	}
	if r := f.run("nodes", "resume", "dev1"); r.code != 0 || r.stdout != "nothing to do: the nodes were already resumed\n" {
		t.Errorf("resume: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	if r := f.run("nodes", "down", "dev4", "--reason", "PSU failed"); r.code != 0 || r.stdout != "set down dev4\n" {
		t.Errorf("down: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nodes", "drain", "dev1"}, 2, "--reason is required"},
		{[]string{"nodes", "down", "dev1"}, 2, "--reason is required"},
		{[]string{"nodes", "drain", "--reason", "x"}, 2, "name the nodes to drain"},
		{[]string{"nodes", "resume"}, 2, "name the nodes to resume"},
		{[]string{"nodes", "drain", "nope", "--reason", "x"}, 1, "no node nope (nothing changed)"},
	} {
		r := f.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line with %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}
