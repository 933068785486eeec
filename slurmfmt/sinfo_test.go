package slurmfmt

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func sinfoCluster() ([]api.Partition, []api.Node) {
	parts := []api.Partition{
		{Name: "debug", Default: true, AllNodes: true, MaxTime: 3600},
		{Name: "gpu", Nodes: []string{"dev3"}, DefaultTime: 1800},
	}
	nodes := []api.Node{
		{Name: "dev1", State: api.NodeIdle, CPUs: 2, MemBytes: 4 << 30},
		{Name: "dev2", State: api.NodeMixed, CPUs: 2, AllocCPUs: 1, MemBytes: 4 << 30},
		{Name: "dev3", State: api.NodeIdle, CPUs: 2, MemBytes: 4 << 30, Features: []string{"gpu", "ib"}},
		{Name: "dev4", State: api.NodeDrained, CPUs: 2, MemBytes: 4 << 30, Reason: "disk", DrainedSince: at("2026-03-04T09:00:00")},
	}
	return parts, nodes
}

func sinfoText(t *testing.T, format string, names, perNode, noHeader bool) string {
	t.Helper()
	parts, nodes := sinfoCluster()
	l, unknown := NewNodeLayout(format, names)
	if len(unknown) > 0 {
		t.Fatalf("unknown fields %v in %q", unknown, format)
	}
	env := &Env{Now: testNow}
	return strings.Join(l.Lines(l.Group(parts, nodes, perNode, env), noHeader, env), "\n") + "\n"
}

func TestSinfoDefault(t *testing.T) {
	want := "" +
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
		"debug*       up    1:00:00      2   idle dev[1,3]\n" +
		"debug*       up    1:00:00      1    mix dev2\n" +
		"debug*       up    1:00:00      1  drain dev4\n" +
		"gpu          up   infinite      1   idle dev3\n"
	if got := sinfoText(t, SinfoDefault, false, false, false); got != want {
		t.Errorf("sinfo:\n%s\nwant:\n%s", got, want)
	}
	// As Slurm 22.05 printed them (scripts/slurm-diff.sh): the node
	// column at least 9 wide, the partition right-justified.
	want = "" +
		"NODELIST   NODES PARTITION STATE \n" +
		"dev1           1    debug* idle  \n" +
		"dev2           1    debug* mix   \n" +
		"dev3           1    debug* idle  \n" +
		"dev3           1       gpu idle  \n" +
		"dev4           1    debug* drain \n"
	if got := sinfoText(t, SinfoNodes, false, true, false); got != want {
		t.Errorf("sinfo -N:\n%s\nwant:\n%s", got, want)
	}
	want = "" +
		"PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
		"debug*       up    1:00:00          1/2/1/4 dev[1-4]\n" +
		"gpu          up   infinite          0/1/0/1 dev3\n"
	if got := sinfoText(t, SinfoSummarize, false, false, false); got != want {
		t.Errorf("sinfo -s:\n%s\nwant:\n%s", got, want)
	}
	if got := sinfoText(t, SinfoReasons, false, true, false); !strings.HasPrefix(got, "REASON               USER      TIMESTAMP           NODELIST\n") ||
		!strings.Contains(got, "\ndisk                 Unknown   2026-03-04T09:00:00 dev4\n") {
		t.Errorf("sinfo -R:\n%s", got)
	}
}

func TestSinfoFields(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"%P", "debug*\ngpu\n"},
		{"%R %D", "debug 4\ngpu 1\n"},
		{"%a|%l|%L", "up|1:00:00|n/a\nup|infinite|30:00\n"},
		{"%t %T", "idle idle\nmix mixed\ndrain drained\nidle idle\n"},
		{"%C", "1/5/2/8\n0/2/0/2\n"},
		{"%F %A", "1/2/1/4 1/2\n0/1/0/1 0/1\n"},
		{"%c %m %e %G %O %s %z", "2 4096 N/A (null) N/A 1-infinite 2:1:1\n2 4096 N/A (null) N/A 1-infinite 2:1:1\n"},
		{"%E|%H|%N", "none|Unknown|dev[1-3]\ndisk|2026-03-04T09:00:00|dev4\nnone|Unknown|dev3\n"},
		{"%t %N", "idle dev[1,3]\nmix dev2\ndrain dev4\nidle dev3\n"},
		{"%f %N", "(null) dev[1-2,4]\ngpu,ib dev3\ngpu,ib dev3\n"},
	} {
		if got := sinfoText(t, tc.format, false, false, true); got != tc.want {
			t.Errorf("sinfo -h -o %q:\n%s\nwant:\n%s", tc.format, got, tc.want)
		}
	}
	// Fields that tell groups apart split them; counts and lists do not.
	if got, want := sinfoText(t, "%P %D", false, false, true), "debug* 4\ngpu 1\n"; got != want {
		t.Errorf("sinfo -o '%%P %%D': %q, want %q", got, want)
	}
	if got, want := sinfoText(t, "Partition:8,Nodes:.4", true, false, false), "PARTITIONODE\ndebug*     4\ngpu        1\n"; got != want {
		t.Errorf("sinfo -O: %q, want %q", got, want)
	}
	for name, key := range nodeNames {
		if _, ok := nodeFields[key]; !ok {
			t.Errorf("-O %s maps to %%%s, which is no field", name, key)
		}
	}
	if _, unknown := NewNodeLayout("%P %Q", false); len(unknown) != 1 || unknown[0] != "Q" {
		t.Errorf("unknown sinfo letters %v, want [Q]", unknown)
	}
}

// TestNodeStateMatches: sinfo -t filters as Slurm 22.05's did on a
// loopback cluster: a base state matches whatever flag is on top of it
// (idle took an IDLE+DRAIN and an IDLE+COMPLETING node, mix a
// MIXED+COMPLETING one), alloc took every node running a job (mixed and
// draining ones too), comp and drain are flags.
func TestNodeStateMatches(t *testing.T) {
	idle := api.Node{State: api.NodeIdle, CPUs: 2}
	mixed := api.Node{State: api.NodeMixed, CPUs: 2, AllocCPUs: 1}
	mixedComp := api.Node{State: api.NodeMixed, CPUs: 2, AllocCPUs: 2, Completing: true}
	alloc := api.Node{State: api.NodeAllocated, CPUs: 2, AllocCPUs: 2}
	allocComp := api.Node{State: api.NodeAllocated, CPUs: 2, AllocCPUs: 2, Completing: true}
	comp := api.Node{State: api.NodeCompleting, CPUs: 2, AllocCPUs: 1, Completing: true}
	draining := api.Node{State: api.NodeDraining, CPUs: 2, AllocCPUs: 1}
	drained := api.Node{State: api.NodeDrained, CPUs: 2}
	down := api.Node{State: api.NodeDown, CPUs: 2}
	silent := api.Node{State: api.NodeDown, CPUs: 2, Reason: api.NodeNotResponding}
	for _, tc := range []struct {
		n    api.Node
		name string
		want bool
	}{
		{idle, "IDLE", true}, {idle, "alloc", false}, {idle, "down", false},
		{mixed, "mix", true}, {mixed, "mixed", true}, {mixed, "alloc", true}, {mixed, "idle", false}, {mixed, "comp", false},
		{mixedComp, "mix", true}, {mixedComp, "comp", true}, {mixedComp, "completing", true}, {mixedComp, "alloc", true},
		{alloc, "alloc", true}, {alloc, "allocated", true}, {alloc, "mix", false},
		{allocComp, "alloc", true}, {allocComp, "comp", true}, {allocComp, "alloc+", true},
		{comp, "comp", true}, {comp, "COMPLETING", true}, {comp, "idle", true}, {comp, "alloc", false}, {comp, "mix", false},
		{draining, "drain", true}, {draining, "drng", true}, {draining, "draining", true}, {draining, "alloc", true},
		{draining, "mix", true}, {draining, "idle", false},
		{drained, "drain", true}, {drained, "drained", true}, {drained, "idle", true}, {drained, "drng", false}, {drained, "alloc", false},
		{down, "down", true}, {down, "idle", false}, {down, "alloc", false}, {down, "no_respond", false},
		{silent, "down", true}, {silent, "down*", true}, {silent, "no_respond", true},
	} {
		if got := NodeStateMatches(&tc.n, tc.name); got != tc.want {
			t.Errorf("NodeStateMatches(%s completing=%v, %q) = %v", tc.n.State, tc.n.Completing, tc.name, got)
		}
	}
}

// TestNodeRecordFeatures: scontrol show node lists a node's features, and
// (null) for a node without any.
func TestNodeRecordFeatures(t *testing.T) {
	_, nodes := sinfoCluster()
	for _, tc := range []struct {
		n    api.Node
		want string
	}{{nodes[2], "AvailableFeatures=gpu,ib\n   ActiveFeatures=gpu,ib\n"}, {nodes[0], "AvailableFeatures=(null)\n   ActiveFeatures=(null)\n"}} {
		var b strings.Builder
		if err := NodeRecord(&b, &tc.n, &Env{Now: testNow}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("scontrol show node %s:\n%s\nwant it to hold %q", tc.n.Name, b.String(), tc.want)
		}
	}
}

// A part of an ended run still stopping is Slurm's COMPLETING flag on
// top of the state the running jobs give, shown as Slurm 22.05 showed it
// on a loopback cluster whose epilog kept jobs completing: comp in sinfo
// for a node it alone holds (IDLE+COMPLETING) or one partly running
// (MIXED+COMPLETING), alloc+ for one the running jobs fill; counted
// allocated and up either way. scontrol's State= is the base state with
// the flags after it, DRAIN included.
func TestCompletingNode(t *testing.T) {
	for _, tc := range []struct {
		n                  api.Node
		short, long, state string
	}{
		{api.Node{State: api.NodeCompleting, CPUs: 4, AllocCPUs: 4, Completing: true}, "comp", "completing", "IDLE+COMPLETING"},
		{api.Node{State: api.NodeMixed, CPUs: 4, AllocCPUs: 4, Completing: true}, "comp", "completing", "MIXED+COMPLETING"},
		{api.Node{State: api.NodeAllocated, CPUs: 4, AllocCPUs: 4, Completing: true}, "alloc+", "allocated+", "ALLOCATED+COMPLETING"},
		{api.Node{State: api.NodeMixed, CPUs: 4, AllocCPUs: 1}, "mix", "mixed", "MIXED"},
		{api.Node{State: api.NodeDraining, CPUs: 4, AllocCPUs: 1}, "drng", "draining", "MIXED+DRAIN"},
		{api.Node{State: api.NodeDraining, CPUs: 4, AllocCPUs: 4, Completing: true}, "drng", "draining", "ALLOCATED+COMPLETING+DRAIN"},
		{api.Node{State: api.NodeDrained, CPUs: 4}, "drain", "drained", "IDLE+DRAIN"},
		{api.Node{State: api.NodeDown, CPUs: 4}, "down", "down", "DOWN"},
		{api.Node{State: api.NodeDown, CPUs: 4, Reason: api.NodeNotResponding}, "down*", "down*", "DOWN+NOT_RESPONDING"},
	} {
		n := tc.n
		if got := nodeStateShort(&n); got != tc.short {
			t.Errorf("%s completing=%v: sinfo %%t = %q, want %q", n.State, n.Completing, got, tc.short)
		}
		if got := nodeStateLong(&n); got != tc.long {
			t.Errorf("%s completing=%v: sinfo %%T = %q, want %q", n.State, n.Completing, got, tc.long)
		}
		var b strings.Builder
		if err := NodeRecord(&b, &n, &Env{Now: testNow}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), " State="+tc.state+" ") {
			t.Errorf("%s completing=%v: scontrol show node, want State=%s:\n%s", n.State, n.Completing, tc.state, b.String())
		}
		if n.Completing && n.State != api.NodeDraining {
			if alloc, idle, other := nodeCounts(&NodeGroup{Nodes: []*api.Node{&n}}); alloc != 1 || idle != 0 || other != 0 || !up(&n) {
				t.Errorf("%s completing: counted %d/%d/%d (A/I/O), up %v", n.State, alloc, idle, other, up(&n))
			}
		}
	}
}
