package slurmfmt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// NodeGroup is one sinfo line: nodes of one partition that print alike
// (or, with -N, one node).
type NodeGroup struct {
	Part  *api.Partition
	Nodes []*api.Node
}

// nodeField is one sinfo field: its header, whether it sums its group
// (instead of telling groups apart), and its value.
type nodeField struct {
	header string
	sums   bool
	value  func(g *NodeGroup, e *Env) string
}

// nodeFields are sinfo's -o letters corral can fill, from sinfo(1).
var nodeFields = map[string]nodeField{
	"a": {"AVAIL", false, func(*NodeGroup, *Env) string { return "up" }},
	"A": {"NODES(A/I)", true, func(g *NodeGroup, _ *Env) string {
		a, i, _ := nodeCounts(g)
		return fmt.Sprintf("%d/%d", a, i)
	}},
	"c": {"CPUS", false, func(g *NodeGroup, _ *Env) string { return strconv.Itoa(first(g).CPUs) }},
	"C": {"CPUS(A/I/O/T)", true, func(g *NodeGroup, _ *Env) string {
		var a, i, o, t int
		for _, n := range g.Nodes {
			t += n.CPUs
			a += n.AllocCPUs
			if up(n) {
				i += n.CPUs - n.AllocCPUs
			} else {
				o += n.CPUs - n.AllocCPUs
			}
		}
		return fmt.Sprintf("%d/%d/%d/%d", a, i, o, t)
	}},
	"d": {"TMP_DISK", false, func(*NodeGroup, *Env) string { return "0" }},
	"D": {"NODES", true, func(g *NodeGroup, _ *Env) string { return strconv.Itoa(len(g.Nodes)) }},
	"e": {"FREE_MEM", false, func(*NodeGroup, *Env) string { return "N/A" }},
	"E": {"REASON", false, func(g *NodeGroup, _ *Env) string { return cmpOr(first(g).Reason, "none") }},
	"f": {"AVAIL_FEATURES", false, func(g *NodeGroup, _ *Env) string { return features(first(g)) }},
	"F": {"NODES(A/I/O/T)", true, func(g *NodeGroup, _ *Env) string {
		a, i, o := nodeCounts(g)
		return fmt.Sprintf("%d/%d/%d/%d", a, i, o, len(g.Nodes))
	}},
	"g": {"GROUPS", false, func(*NodeGroup, *Env) string { return "all" }},
	"G": {"GRES", false, func(g *NodeGroup, _ *Env) string { return nodeGres(first(g)) }},
	"h": {"OVERSUBSCRIBE", false, func(g *NodeGroup, _ *Env) string { return PartitionOverSubscribe(g.Part) }},
	// corral does not keep who set a node's reason.
	"u": {"USER", false, func(*NodeGroup, *Env) string { return "Unknown" }},
	"H": {"TIMESTAMP", false, func(g *NodeGroup, e *Env) string { return e.stamp(first(g).DrainedSince, "Unknown") }},
	"l": {"TIMELIMIT", false, func(g *NodeGroup, _ *Env) string { return infinite(g.Part.MaxTime) }},
	"L": {"DEFAULTTIME", false, func(g *NodeGroup, _ *Env) string {
		if g.Part.DefaultTime <= 0 {
			return "n/a"
		}
		return Compact(g.Part.DefaultTime)
	}},
	"m": {"MEMORY", false, func(g *NodeGroup, _ *Env) string { return strconv.FormatInt(first(g).MemBytes>>20, 10) }},
	"n": {"HOSTNAMES", true, func(g *NodeGroup, _ *Env) string { return groupNames(g) }},
	"N": {"NODELIST", true, func(g *NodeGroup, _ *Env) string { return groupNames(g) }},
	"o": {"NODE_ADDR", true, func(g *NodeGroup, _ *Env) string { return groupNames(g) }},
	"O": {"CPU_LOAD", false, func(*NodeGroup, *Env) string { return "N/A" }},
	"P": {"PARTITION", false, func(g *NodeGroup, _ *Env) string {
		if g.Part.Default {
			return g.Part.Name + "*"
		}
		return g.Part.Name
	}},
	"r": {"ROOT", false, func(*NodeGroup, *Env) string { return "no" }},
	"R": {"PARTITION", false, func(g *NodeGroup, _ *Env) string { return g.Part.Name }},
	"s": {"JOB_SIZE", false, func(*NodeGroup, *Env) string { return "1-infinite" }},
	"t": {"STATE", false, func(g *NodeGroup, _ *Env) string { return orNA(g, nodeStateShort) }},
	"T": {"STATE", false, func(g *NodeGroup, _ *Env) string { return orNA(g, nodeStateLong) }},
	"w": {"WEIGHT", false, func(*NodeGroup, *Env) string { return "1" }},
	"z": {"S:C:T", false, func(g *NodeGroup, _ *Env) string {
		if len(g.Nodes) == 0 {
			return "0:0:0"
		}
		return strconv.Itoa(first(g).CPUs) + ":1:1"
	}},
}

// first is the node whose fields the group's line shows: its first, or
// for a partition none of whose nodes is listed a node of nothing.
func first(g *NodeGroup) *api.Node {
	if len(g.Nodes) == 0 {
		return &api.Node{}
	}
	return g.Nodes[0]
}

// orNA is state(first node), or n/a for a partition none of whose nodes
// is listed.
func orNA(g *NodeGroup, state func(*api.Node) string) string {
	if len(g.Nodes) == 0 {
		return "n/a"
	}
	return state(g.Nodes[0])
}

// nodeNames maps sinfo's -O names (any case) to the letters above.
var nodeNames = map[string]string{
	"available": "a", "nodeai": "A", "cpus": "c", "cpusstate": "C", "disk": "d", "nodes": "D",
	"freemem": "e", "reason": "E", "features": "f", "nodeaiot": "F", "groups": "g", "gres": "G",
	"oversubscribe": "h", "timestamp": "H", "time": "l", "defaulttime": "L", "memory": "m",
	"nodehost": "n", "nodelist": "N", "nodeaddr": "o", "cpusload": "O", "partition": "P",
	"root": "r", "partitionname": "R", "size": "s", "statecompact": "t", "statelong": "T",
	"weight": "w", "socketcorethread": "z",
}

// Sinfo's default formats (sinfo(1)); # is as wide as the longest
// value of the column needs, at least its header.
const (
	SinfoDefault   = "%#P %.5a %.10l %.6D %.6t %N"
	SinfoNodes     = "%#9N %.6D %.9P %6t"
	SinfoLong      = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
	SinfoNodesLong = "%#9N %.6D %.9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
	SinfoSummarize = "%#P %.5a %.10l %.16F %N"
	SinfoReasons   = "%20E %9u %19H %N"
)

// NodeLayout is a parsed sinfo format, ready to print groups.
type NodeLayout struct {
	Fields []Field
	keys   []string
}

// NewNodeLayout resolves an sinfo format or, with names, an -O list. It returns the keys it does not know.
func NewNodeLayout(format string, names bool) (*NodeLayout, []string) {
	fields := ParsePercent(format)
	if names {
		fields = ParseNames(format)
	}
	l := &NodeLayout{}
	var unknown []string
	for _, f := range fields {
		key := f.Key
		if names && !f.Literal {
			key = nodeNames[strings.ToLower(f.Key)]
		}
		if _, ok := nodeFields[key]; !f.Literal && !ok {
			unknown = append(unknown, f.Key)
			continue
		}
		l.Fields = append(l.Fields, f)
		l.keys = append(l.keys, key)
	}
	return l, unknown
}

// Group splits each partition's nodes into sinfo's lines: with perNode
// one line per node, else nodes whose shown fields (other than counts
// and lists) print alike share a line.
func (l *NodeLayout) Group(parts []api.Partition, nodes []api.Node, perNode bool, e *Env) []NodeGroup {
	var groups []NodeGroup
	for pi := range parts {
		p := &parts[pi]
		members := PartitionNodes(p, nodes)
		index := map[string]int{}
		for ni := range members {
			n := &members[ni]
			if perNode {
				groups = append(groups, NodeGroup{Part: p, Nodes: []*api.Node{n}})
				continue
			}
			one := &NodeGroup{Part: p, Nodes: []*api.Node{n}}
			var key strings.Builder
			for i, k := range l.keys {
				if f := nodeFields[k]; !l.Fields[i].Literal && !f.sums {
					key.WriteString(f.value(one, e))
					key.WriteByte(0)
				}
			}
			if gi, ok := index[key.String()]; ok {
				groups[gi].Nodes = append(groups[gi].Nodes, n)
				continue
			}
			index[key.String()] = len(groups)
			groups = append(groups, *one)
		}
		if !perNode && len(index) == 0 && l.showsPartition() {
			// As Slurm's sinfo: a partition none of whose nodes is
			// listed (-t, -n, or none configured) still gets its line, 0
			// nodes in state n/a, where the partition is shown: a script
			// reading `sinfo -h -t idle -o "%P %D"` finds its 0.
			groups = append(groups, NodeGroup{Part: p})
		}
	}
	if perNode { // sinfo -N lists by node, each once per partition
		slices.SortStableFunc(groups, func(a, b NodeGroup) int { return hostOrder(a.Nodes[0].Name, b.Nodes[0].Name) })
	}
	return groups
}

// hostOrder compares node names as hostlists order them (dev2 before
// dev10).
func hostOrder(x, y string) int {
	switch {
	case x == y:
		return 0
	case hostlist.Less(x, y):
		return -1
	}
	return 1
}

// showsPartition reports whether the layout has a partition field.
func (l *NodeLayout) showsPartition() bool {
	for i, k := range l.keys {
		if !l.Fields[i].Literal && (k == "P" || k == "R") {
			return true
		}
	}
	return false
}

// Lines prints the header (unless noHeader) and one line per group.
func (l *NodeLayout) Lines(groups []NodeGroup, noHeader bool, e *Env) []string {
	values := make([][]string, len(groups))
	fields := append([]Field(nil), l.Fields...)
	for gi := range groups {
		values[gi] = make([]string, len(fields))
		for i, k := range l.keys {
			if !fields[i].Literal {
				values[gi][i] = printable(nodeFields[k].value(&groups[gi], e))
			}
		}
	}
	for i := range fields {
		if !fields[i].Fit {
			continue
		}
		w := max(len(nodeFields[l.keys[i]].header), fields[i].Width) // "%#9N": at least 10
		for gi := range values {
			w = max(w, len([]rune(values[gi][i])))
		}
		fields[i].Width = w
	}
	var out []string
	if !noHeader {
		out = append(out, Line(fields, func(i int) string { return nodeFields[l.keys[i]].header }))
	}
	for gi := range values {
		out = append(out, Line(fields, func(i int) string { return values[gi][i] }))
	}
	return out
}

func nodeCounts(g *NodeGroup) (alloc, idle, other int) {
	for _, n := range g.Nodes {
		switch n.State {
		case api.NodeIdle:
			idle++
		case api.NodeMixed, api.NodeAllocated, api.NodeCompleting, api.NodeDraining:
			alloc++
		default:
			other++
		}
	}
	return
}

func up(n *api.Node) bool {
	return n.State == api.NodeIdle || n.State == api.NodeMixed || n.State == api.NodeAllocated || n.State == api.NodeCompleting
}

func groupNames(g *NodeGroup) string {
	names := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		names[i] = n.Name
	}
	return hostlist.Compress(names)
}

// infinite is a partition limit as sinfo prints it.
func infinite(secs int64) string {
	if secs <= 0 {
		return "infinite"
	}
	return Compact(secs)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nodeStateShort is sinfo's %t: idle, mix, alloc, comp, down, drng,
// drain. A part still stopping there is Slurm's COMPLETING flag: it
// shows on an allocated node as alloc+, on any other up node as comp
// (Slurm's node_state_string_compact); draining wins over both.
func nodeStateShort(n *api.Node) string {
	switch n.State {
	case api.NodeMixed:
		if n.Completing {
			return "comp"
		}
		return "mix"
	case api.NodeAllocated:
		if n.Completing {
			return "alloc+"
		}
		return "alloc"
	case api.NodeCompleting:
		return "comp"
	case api.NodeDraining:
		return "drng"
	case api.NodeDrained:
		return "drain"
	case api.NodeDown:
		if notResponding(n) {
			return "down*"
		}
	}
	return strings.ToLower(string(n.State))
}

// notResponding: n is DOWN because it missed its heartbeats, Slurm's
// NOT_RESPONDING flag (the * of sinfo's states).
func notResponding(n *api.Node) bool {
	return n.State == api.NodeDown && n.Reason == api.NodeNotResponding
}

// nodeStateLong is sinfo's %T: idle, mixed, allocated, completing,
// down, draining, drained, and allocated+ for alloc+.
func nodeStateLong(n *api.Node) string {
	switch {
	case n.Completing && n.State == api.NodeAllocated:
		return "allocated+"
	case n.Completing && n.State == api.NodeMixed:
		return "completing"
	case notResponding(n):
		return "down*"
	}
	return strings.ToLower(string(n.State))
}

// NodeStateMatches reports whether node n passes an sinfo -t name
// (short or long, any case), as Slurm 22.05's sinfo filters: a base
// state matches whatever flags are on top of it (idle takes a drained
// node and one whose only jobs are completing), alloc takes every node
// running jobs, comp and drain are flags.
func NodeStateMatches(n *api.Node, name string) bool {
	switch name = strings.ToLower(name); name {
	case "idle":
		return n.State == api.NodeIdle || n.State == api.NodeCompleting || n.State == api.NodeDrained
	case "mix", "mixed":
		return n.State == api.NodeMixed || n.State == api.NodeDraining && !fullyAllocated(n)
	case "alloc", "allocated":
		return n.State == api.NodeMixed || n.State == api.NodeAllocated || n.State == api.NodeDraining
	case "comp", "completing":
		return n.Completing || n.State == api.NodeCompleting
	case "drain":
		return n.State == api.NodeDraining || n.State == api.NodeDrained
	case "down":
		return n.State == api.NodeDown
	case "no_respond", "not_responding":
		return notResponding(n)
	}
	return name == nodeStateShort(n) || name == nodeStateLong(n)
}

// fullyAllocated: no CPU or no memory of n is left.
func fullyAllocated(n *api.Node) bool {
	return n.AllocCPUs >= n.CPUs || n.MemBytes > 0 && n.AllocMemBytes >= n.MemBytes
}

// nodeStateComplete is scontrol's State=: the base state with Slurm's
// flags after it (node_state_string_complete), e.g. MIXED+COMPLETING,
// IDLE+DRAIN.
func nodeStateComplete(n *api.Node) string {
	base, flags := string(n.State), ""
	switch n.State {
	case api.NodeCompleting:
		base = string(api.NodeIdle)
	case api.NodeDraining:
		base = string(api.NodeMixed)
		if fullyAllocated(n) {
			base = string(api.NodeAllocated)
		}
	case api.NodeDrained:
		base = string(api.NodeIdle)
	}
	if n.Completing || n.State == api.NodeCompleting {
		flags += "+COMPLETING"
	}
	if n.State == api.NodeDraining || n.State == api.NodeDrained {
		flags += "+DRAIN"
	}
	if notResponding(n) {
		flags += "+NOT_RESPONDING"
	}
	return base + flags
}
