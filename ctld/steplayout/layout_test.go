package steplayout

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// alloc is a job of n nodes n1..nN, each with cpus CPUs, 1 GiB and gpus
// GPUs.
func alloc(n, cpus, gpus int) Alloc {
	a := Alloc{JobID: 7}
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		a.Nodes = append(a.Nodes, Node{Name: name, Addr: "https://" + name + ":6818", CPUs: cpus, MemBytes: 1 << 30, GPUs: gpus})
	}
	return a
}

func rel(n int) *int { return &n }

// placed is a layout in short: node:ranks:cpus per node.
func placed(l Layout) string {
	var parts []string
	for _, n := range l.Nodes {
		parts = append(parts, fmt.Sprintf("%s:%v:%d", n.Node, n.Ranks, n.CPUs))
	}
	return strings.Join(parts, " ")
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name  string
		a     Alloc
		held  map[string]int
		req   api.StepRequest
		want  string     // placed(layout), when granted
		fault fault.Kind // else the refusal's kind...
		why   string     // ...and reason
	}{
		// Task and node counts.
		{name: "nothing given: one task per node, all the node's CPUs",
			a: alloc(2, 4, 0), want: "n1:[0]:4 n2:[1]:4"},
		{name: "-n over two nodes, block", a: alloc(2, 4, 0), req: api.StepRequest{Ntasks: 4},
			want: "n1:[0 1]:4 n2:[2 3]:4"},
		{name: "-n dealt round-robin, numbered in blocks (srun(1)'s example)", a: alloc(3, 2, 0),
			req: api.StepRequest{Ntasks: 4}, want: "n1:[0 1]:2 n2:[2]:2 n3:[3]:2"},
		{name: "-m cyclic", a: alloc(3, 2, 0), req: api.StepRequest{Ntasks: 4, Distribution: "cyclic"},
			want: "n1:[0 3]:2 n2:[1]:2 n3:[2]:2"},
		{name: "-m cyclic:block,pack reads the first method", a: alloc(2, 2, 0),
			req: api.StepRequest{Ntasks: 4, Distribution: "cyclic:block,Pack"}, want: "n1:[0 2]:2 n2:[1 3]:2"},
		{name: "-m block and * are the default", a: alloc(2, 2, 0),
			req: api.StepRequest{Ntasks: 3, Distribution: "*"}, want: "n1:[0 1]:2 n2:[2]:2"},
		{name: "-m plane is refused", a: alloc(2, 2, 0), req: api.StepRequest{Distribution: "plane=2"},
			fault: fault.Invalid, why: ReasonDist},
		{name: "-m arbitrary is refused", a: alloc(2, 2, 0), req: api.StepRequest{Distribution: "arbitrary"},
			fault: fault.Invalid, why: ReasonDist},
		{name: "fewer tasks than nodes uses fewer nodes", a: alloc(3, 4, 0), req: api.StepRequest{Ntasks: 2},
			want: "n1:[0]:4 n2:[1]:4"},
		{name: "--ntasks-per-node without -n", a: alloc(2, 4, 0), req: api.StepRequest{NtasksPerNode: 2},
			want: "n1:[0 1]:4 n2:[2 3]:4"},
		{name: "--ntasks-per-node caps -n per node", a: alloc(2, 4, 0),
			req: api.StepRequest{Ntasks: 3, NtasksPerNode: 1}, fault: fault.Invalid, why: ReasonCPUs},
		{name: "--ntasks-per-node with -n within it", a: alloc(2, 4, 0),
			req: api.StepRequest{Ntasks: 3, NtasksPerNode: 2}, want: "n1:[0 1]:4 n2:[2]:4"},
		{name: "--ntasks-per-node beyond the node's CPUs", a: alloc(2, 2, 0),
			req: api.StepRequest{NtasksPerNode: 3}, fault: fault.Invalid, why: ReasonCPUs},
		{name: "-N 1 -n 2", a: alloc(2, 4, 0), req: api.StepRequest{Nodes: 1, Ntasks: 2},
			want: "n1:[0 1]:4"},
		{name: "-N lowered to -n", a: alloc(2, 4, 0), req: api.StepRequest{Nodes: 2, Ntasks: 1},
			want: "n1:[0]:4"},
		{name: "-N without -n: one task per node of the step", a: alloc(3, 4, 0), req: api.StepRequest{Nodes: 2},
			want: "n1:[0]:4 n2:[1]:4"},
		{name: "-N beyond the allocation", a: alloc(2, 4, 0), req: api.StepRequest{Nodes: 3},
			fault: fault.Invalid, why: ReasonNodes},
		// -N MIN-MAX, as Slurm 22.05 laid out steps in a two-node job: as
		// many nodes as the tasks and the allocation allow, up to MAX.
		{name: "-N 1-2 -n 4 on 2-CPU nodes takes both", a: alloc(2, 2, 0),
			req: api.StepRequest{Nodes: 2, NodesMin: 1, Ntasks: 4}, want: "n1:[0 1]:2 n2:[2 3]:2"},
		{name: "-N 1-2 -n 2 spreads over both", a: alloc(2, 4, 0),
			req: api.StepRequest{Nodes: 2, NodesMin: 1, Ntasks: 2}, want: "n1:[0]:4 n2:[1]:4"},
		{name: "-N 1-2 -n 1 takes one", a: alloc(2, 4, 0),
			req: api.StepRequest{Nodes: 1, NodesMin: 1, Ntasks: 1}, want: "n1:[0]:4"},
		{name: "-N 1-5 takes the allocation's three", a: alloc(3, 4, 0),
			req: api.StepRequest{Nodes: 5, NodesMin: 1}, want: "n1:[0]:4 n2:[1]:4 n3:[2]:4"},
		{name: "-N 3-5 beyond the allocation", a: alloc(2, 4, 0), req: api.StepRequest{Nodes: 5, NodesMin: 3},
			fault: fault.Invalid, why: ReasonNodes},
		{name: "a MIN above MAX", a: alloc(2, 4, 0), req: api.StepRequest{Nodes: 1, NodesMin: 2},
			fault: fault.Invalid, why: ReasonNodeCnt},
		{name: "more tasks than CPUs", a: alloc(2, 4, 0), req: api.StepRequest{Ntasks: 9},
			fault: fault.Invalid, why: ReasonCPUs},
		{name: "negative -n", a: alloc(1, 4, 0), req: api.StepRequest{Ntasks: -1}, fault: fault.Invalid, why: ReasonTasks},
		{name: "negative -N", a: alloc(1, 4, 0), req: api.StepRequest{Nodes: -1}, fault: fault.Invalid, why: ReasonNodeCnt},
		{name: "negative --mem", a: alloc(1, 4, 0), req: api.StepRequest{MemBytes: -1}, fault: fault.Invalid, why: ReasonMemory},

		// -c and --exact.
		{name: "-c implies --exact", a: alloc(1, 8, 0), req: api.StepRequest{Ntasks: 2, CPUsPerTask: 3},
			want: "n1:[0 1]:6"},
		{name: "-c beyond the node", a: alloc(1, 4, 0), req: api.StepRequest{Ntasks: 2, CPUsPerTask: 3},
			fault: fault.Invalid, why: ReasonCPUs},
		{name: "--exact takes tasks x 1 CPU", a: alloc(2, 4, 0), req: api.StepRequest{Ntasks: 3, Exact: true},
			want: "n1:[0 1]:2 n2:[2]:1"},

		// Beside running steps.
		{name: "a second whole-node step waits", a: alloc(1, 4, 0), held: map[string]int{"n1": 1},
			fault: fault.Conflict, why: ReasonBusy},
		{name: "--exact fits beside a running step", a: alloc(1, 4, 0), held: map[string]int{"n1": 1},
			req: api.StepRequest{Ntasks: 3, Exact: true}, want: "n1:[0 1 2]:3"},
		{name: "--exact beyond the free CPUs waits", a: alloc(1, 4, 0), held: map[string]int{"n1": 2},
			req: api.StepRequest{Ntasks: 3, Exact: true}, fault: fault.Conflict, why: ReasonBusy},
		{name: "--exact beyond the allocation is refused, not waited for", a: alloc(1, 4, 0), held: map[string]int{"n1": 2},
			req: api.StepRequest{Ntasks: 5, Exact: true}, fault: fault.Invalid, why: ReasonCPUs},
		{name: "--overlap ignores running steps", a: alloc(1, 4, 0), held: map[string]int{"n1": 4},
			req: api.StepRequest{Ntasks: 2, Overlap: true}, want: "n1:[0 1]:4"},
		{name: "a one-node step takes the first free node", a: alloc(2, 4, 0), held: map[string]int{"n1": 4},
			req: api.StepRequest{Ntasks: 1}, want: "n2:[0]:4"},
		{name: "the first node with room, in job order", a: alloc(3, 4, 0), held: map[string]int{"n1": 1},
			req: api.StepRequest{Ntasks: 1, Exact: true}, want: "n1:[0]:1"},
		{name: "the roomiest nodes when the first ones cannot hold the tasks", a: alloc(3, 4, 0),
			held: map[string]int{"n1": 3, "n2": 2},
			req:  api.StepRequest{Nodes: 1, Ntasks: 3, Exact: true}, want: "n3:[0 1 2]:3"},
		{name: "tasks dealt by free CPUs", a: alloc(2, 4, 0), held: map[string]int{"n1": 3},
			req: api.StepRequest{Ntasks: 4, Exact: true}, want: "n1:[0]:1 n2:[1 2 3]:3"},
		{name: "--ntasks-per-node needs it on every node now", a: alloc(2, 4, 0), held: map[string]int{"n1": 3},
			req: api.StepRequest{NtasksPerNode: 2, Exact: true}, fault: fault.Conflict, why: ReasonBusy},

		// -w, -x, -r.
		{name: "-w one node", a: alloc(2, 4, 0), req: api.StepRequest{NodeList: []string{"n2"}},
			want: "n2:[0]:4"},
		{name: "-w and a larger -N adds nodes", a: alloc(3, 4, 0), req: api.StepRequest{Nodes: 2, NodeList: []string{"n3"}},
			want: "n1:[0]:4 n3:[1]:4"},
		{name: "-w outside the job", a: alloc(2, 4, 0), req: api.StepRequest{NodeList: []string{"n9"}},
			fault: fault.Invalid, why: ReasonNodes},
		{name: "-w more nodes than tasks", a: alloc(2, 4, 0), req: api.StepRequest{Ntasks: 1, NodeList: []string{"n1", "n2"}},
			fault: fault.Invalid, why: ReasonNodes},
		{name: "-w a busy node waits", a: alloc(2, 4, 0), held: map[string]int{"n2": 1},
			req: api.StepRequest{NodeList: []string{"n2"}}, fault: fault.Conflict, why: ReasonBusy},
		{name: "-w and -x the same node", a: alloc(2, 4, 0),
			req: api.StepRequest{NodeList: []string{"n1"}, Exclude: []string{"n1"}}, fault: fault.Invalid, why: ReasonNodes},
		{name: "-x", a: alloc(3, 4, 0), req: api.StepRequest{Exclude: []string{"n1", "n9"}},
			want: "n2:[0]:4 n3:[1]:4"},
		{name: "-x every node", a: alloc(2, 4, 0), req: api.StepRequest{Exclude: []string{"n1", "n2"}},
			fault: fault.Invalid, why: ReasonNodes},
		{name: "-r 1", a: alloc(3, 4, 0), req: api.StepRequest{Relative: rel(1), Ntasks: 2},
			want: "n2:[0]:4 n3:[1]:4"},
		{name: "-r takes precedence over -N", a: alloc(3, 4, 0), req: api.StepRequest{Relative: rel(2), Nodes: 3},
			want: "n3:[0]:4"},
		{name: "-r past the last node", a: alloc(2, 4, 0), req: api.StepRequest{Relative: rel(2)},
			fault: fault.Invalid, why: ReasonNodes},
		{name: "-r with -w", a: alloc(2, 4, 0), req: api.StepRequest{Relative: rel(0), NodeList: []string{"n1"}},
			fault: fault.Invalid, why: ReasonRelative},

		// --mem and --gpus-per-task.
		{name: "--mem within the job's share", a: alloc(1, 4, 0), req: api.StepRequest{MemBytes: 1 << 30},
			want: "n1:[0]:4"},
		{name: "--mem beyond it", a: alloc(1, 4, 0), req: api.StepRequest{MemBytes: 1<<30 + 1},
			fault: fault.Invalid, why: ReasonMemory},
		{name: "--gpus-per-task within the node's GPUs", a: alloc(2, 4, 2),
			req: api.StepRequest{Ntasks: 4, GPUsPerTask: 1}, want: "n1:[0 1]:4 n2:[2 3]:4"},
		{name: "--gpus-per-task beyond them", a: alloc(2, 4, 1),
			req: api.StepRequest{Ntasks: 3, GPUsPerTask: 1}, fault: fault.Invalid, why: ReasonGres},
		{name: "--gpus-per-task in a job without GPUs", a: alloc(1, 4, 0),
			req: api.StepRequest{GPUsPerTask: 1}, fault: fault.Invalid, why: ReasonGres},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := tt.held
			if held == nil {
				held = map[string]int{}
			}
			l, err := Place(tt.a, held, tt.req)
			if tt.why != "" {
				want := "Unable to create step for job 7: " + tt.why
				if err == nil || fault.KindOf(err) != tt.fault || !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("Place = %s, %v; want a %v refusal %q", placed(l), err, tt.fault, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if got := placed(l); got != tt.want {
				t.Fatalf("Place = %s, want %s", got, tt.want)
			}
			tasks := 0
			for _, c := range l.TasksPerNode() {
				tasks += c
			}
			if tasks != l.Tasks || len(l.NodeNames()) != len(l.Nodes) {
				t.Fatalf("layout of %d tasks counts %d", l.Tasks, tasks)
			}
			for _, n := range l.Nodes {
				if !strings.HasPrefix(n.Addr, "https://"+n.Node+":") {
					t.Fatalf("node %s has address %q", n.Node, n.Addr)
				}
			}
		})
	}
}

// Hold counts the CPUs of steps that do not overlap, and only those.
func TestHold(t *testing.T) {
	held := map[string]int{}
	Hold(held, []api.StepNode{{Node: "n1", CPUs: 2}, {Node: "n2", CPUs: 1}}, false)
	Hold(held, []api.StepNode{{Node: "n1", CPUs: 4}}, true)
	Hold(held, []api.StepNode{{Node: "n1", CPUs: 1}}, false)
	if want := map[string]int{"n1": 3, "n2": 1}; !reflect.DeepEqual(held, want) {
		t.Fatalf("held = %v, want %v", held, want)
	}
	var f *fault.Error
	_, err := Place(alloc(1, 1, 0), held, api.StepRequest{Ntasks: 2})
	if !errors.As(err, &f) || err.Error() != "Unable to create step for job 7: More processors requested than permitted" {
		t.Fatalf("refusal = %v, want Slurm's words", err)
	}
}
