package steplayout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Node is the job's share of one allocated node.
type Node struct {
	Name     string
	Addr     string // the node plane's base URL, handed to srun
	CPUs     int
	MemBytes int64
	GPUs     int // whole devices
}

// Alloc is a running job's allocation.
type Alloc struct {
	JobID uint64
	Nodes []Node // in the job's order
}

// Layout is a granted step's placement.
type Layout struct {
	Nodes       []api.StepNode // in the job's node order
	Tasks       int
	CPUsPerTask int
}

// NodeNames are the step's nodes, in order.
func (l Layout) NodeNames() []string {
	out := make([]string, len(l.Nodes))
	for i, n := range l.Nodes {
		out[i] = n.Node
	}
	return out
}

// TasksPerNode counts the tasks of each node, aligned with NodeNames.
func (l Layout) TasksPerNode() []int {
	out := make([]int, len(l.Nodes))
	for i, n := range l.Nodes {
		out[i] = len(n.Ranks)
	}
	return out
}

// Hold adds a running step's CPUs to held (CPUs per node), unless the
// step overlaps: what the held argument of Place is made of.
func Hold(held map[string]int, layout []api.StepNode, overlap bool) {
	if overlap {
		return
	}
	for _, n := range layout {
		held[n.Node] += n.CPUs
	}
}

// The refusals' reasons, as Slurm words them.
const (
	ReasonCPUs     = "More processors requested than permitted"
	ReasonNodes    = "Requested node configuration is not available"
	ReasonBusy     = "Requested nodes are busy"
	ReasonMemory   = "Memory required by task is not available"
	ReasonGres     = "Invalid generic resource (gres) specification"
	ReasonTasks    = "Task count specification invalid"
	ReasonNodeCnt  = "Node count specification invalid"
	ReasonDist     = "Task distribution specification invalid"
	ReasonRelative = "--relative cannot be combined with --nodelist or --exclude"
)

func refuse(k fault.Kind, job uint64, reason string) error {
	return fault.Errorf(k, "Unable to create step for job %d: %s", job, reason)
}

// Place lays req out over a, with held the CPUs per node that running
// steps without --overlap hold.
func Place(a Alloc, held map[string]int, req api.StepRequest) (Layout, error) {
	no := func(reason string) (Layout, error) { return Layout{}, refuse(fault.Invalid, a.JobID, reason) }
	switch {
	case req.Ntasks < 0 || req.NtasksPerNode < 0:
		return no(ReasonTasks)
	case req.Nodes < 0 || req.NodesMin < 0 || req.NodesMin > req.Nodes:
		return no(ReasonNodeCnt)
	case req.CPUsPerTask < 0:
		return no(ReasonCPUs)
	case req.MemBytes < 0:
		return no(ReasonMemory)
	case req.GPUsPerTask < 0:
		return no(ReasonGres)
	case req.Relative != nil && (len(req.NodeList) > 0 || len(req.Exclude) > 0):
		return no(ReasonRelative)
	}
	cyclic, ok := distribution(req.Distribution)
	if !ok {
		return no(ReasonDist + " (corral lays tasks out block or cyclic)")
	}
	must, cands, err := candidates(a, req)
	if err != nil {
		return Layout{}, err
	}
	k, n := counts(req, len(must), len(cands))
	if k < len(must) || k > len(cands) || k == 0 || n < k {
		return no(ReasonNodes)
	}
	cpt := max(req.CPUsPerTask, 1)
	exact := req.Exact || req.CPUsPerTask > 0
	p := placer{req: req, cpt: cpt, k: k, n: n, must: must, cands: cands}

	// Could the step ever run here? Judged on the whole allocation, so
	// that what no wait can cure is refused as such.
	for _, nd := range cands {
		if req.MemBytes > nd.MemBytes {
			return no(ReasonMemory)
		}
	}
	if _, ok := p.pick(func(nd Node) int { return nd.CPUs }); !ok {
		return no(ReasonCPUs)
	}
	if req.GPUsPerTask > 0 {
		if _, ok := p.pick(p.withGPUs(func(nd Node) int { return nd.CPUs })); !ok {
			return no(ReasonGres)
		}
	}

	// Now, beside the running steps.
	free := func(nd Node) int {
		switch {
		case req.Overlap:
			return nd.CPUs
		case !exact && held[nd.Name] > 0:
			return 0 // the step would take the whole node
		}
		return max(nd.CPUs-held[nd.Name], 0)
	}
	chosen, ok := p.pick(p.withGPUs(free))
	if !ok {
		return Layout{}, refuse(fault.Conflict, a.JobID, ReasonBusy)
	}
	perNode := deal(chosen, p.capacity(p.withGPUs(free)), n)
	out := Layout{Tasks: n, CPUsPerTask: cpt, Nodes: make([]api.StepNode, len(chosen))}
	for i, nd := range chosen {
		cpus := nd.CPUs
		if exact {
			cpus = perNode[i] * cpt
		}
		out.Nodes[i] = api.StepNode{Node: nd.Name, Addr: nd.Addr, CPUs: cpus}
	}
	number(out.Nodes, perNode, cyclic)
	return out, nil
}

// distribution reads -m's first method: block (false) or cyclic (true).
func distribution(m string) (cyclic, ok bool) {
	m, _, _ = strings.Cut(m, ":")
	m, _, _ = strings.Cut(m, ",")
	switch strings.ToLower(m) {
	case "", "*", "block":
		return false, true
	case "cyclic":
		return true, true
	}
	return false, false
}

// candidates are the nodes the step may use, in job order: must (the -w
// nodes) and all of them (must included).
func candidates(a Alloc, req api.StepRequest) (must, all []Node, err error) {
	nodes := a.Nodes
	if req.Relative != nil {
		r := *req.Relative
		if r < 0 || r >= len(nodes) {
			return nil, nil, refuse(fault.Invalid, a.JobID, fmt.Sprintf("%s (--relative %d, the job has %d nodes)", ReasonNodes, r, len(nodes)))
		}
		nodes = nodes[r:]
	}
	for _, w := range req.NodeList {
		if !slices.ContainsFunc(nodes, func(nd Node) bool { return nd.Name == w }) || slices.Contains(req.Exclude, w) {
			return nil, nil, refuse(fault.Invalid, a.JobID, fmt.Sprintf("%s (%s)", ReasonNodes, w))
		}
	}
	for _, nd := range nodes {
		if slices.Contains(req.Exclude, nd.Name) {
			continue
		}
		if slices.Contains(req.NodeList, nd.Name) {
			must = append(must, nd)
		}
		all = append(all, nd)
	}
	return must, all, nil
}

// counts applies the defaults: k nodes and n tasks.
func counts(req api.StepRequest, must, cands int) (k, n int) {
	switch {
	case req.Nodes > 0:
		k = req.Nodes
	case must > 0:
		k = must
	default:
		k = cands
	}
	if req.Relative != nil {
		k = min(k, cands) // srun(1): --relative takes precedence over -N
	}
	if req.NodesMin > 0 { // -N MIN-MAX: as many as there are, up to MAX
		k = max(min(k, cands), req.NodesMin)
	}
	if req.Ntasks > 0 {
		if req.Nodes > 0 || must == 0 {
			k = min(k, req.Ntasks)
		}
		return k, req.Ntasks
	}
	if req.NtasksPerNode > 0 {
		return k, k * req.NtasksPerNode
	}
	return k, k
}

// placer chooses a step's nodes under a measure of each node's CPUs.
type placer struct {
	req         api.StepRequest
	cpt, k, n   int
	must, cands []Node
}

// withGPUs lowers a CPU measure to what --gpus-per-task leaves: tasks are
// counted in CPUs (tasks × -c), so GPUs are turned into the CPUs of as
// many tasks.
func (p placer) withGPUs(cpus func(Node) int) func(Node) int {
	if p.req.GPUsPerTask == 0 {
		return cpus
	}
	return func(nd Node) int { return min(cpus(nd), nd.GPUs/p.req.GPUsPerTask*p.cpt) }
}

// capacity turns a CPU measure into tasks per node, --ntasks-per-node
// being a maximum.
func (p placer) capacity(cpus func(Node) int) func(Node) int {
	return func(nd Node) int {
		c := cpus(nd) / p.cpt
		if p.req.NtasksPerNode > 0 {
			c = min(c, p.req.NtasksPerNode)
		}
		return c
	}
}

// pick chooses k nodes, the -w ones first, that hold n tasks under cpus,
// each at least one (every --ntasks-per-node when -n is not given), and
// returns them in job order.
func (p placer) pick(cpus func(Node) int) ([]Node, bool) {
	tasks := p.capacity(cpus)
	need := 1
	if p.req.Ntasks == 0 && p.req.NtasksPerNode > 0 {
		need = p.req.NtasksPerNode
	}
	var chosen []Node
	for _, nd := range p.must {
		if tasks(nd) < need {
			return nil, false
		}
		chosen = append(chosen, nd)
	}
	var rest []Node
	for _, nd := range p.cands {
		if tasks(nd) >= need && !slices.ContainsFunc(p.must, func(m Node) bool { return m.Name == nd.Name }) {
			rest = append(rest, nd)
		}
	}
	if len(chosen)+len(rest) < p.k {
		return nil, false
	}
	total := func(nodes []Node) int {
		s := 0
		for _, nd := range nodes {
			s += tasks(nd)
		}
		return s
	}
	first := append(slices.Clone(chosen), rest[:p.k-len(chosen)]...)
	if total(first) >= p.n {
		return inJobOrder(first, p.cands), true
	}
	slices.SortStableFunc(rest, func(x, y Node) int { return cmp.Compare(tasks(y), tasks(x)) })
	roomiest := append(chosen, rest[:p.k-len(chosen)]...)
	if total(roomiest) >= p.n {
		return inJobOrder(roomiest, p.cands), true
	}
	return nil, false
}

func inJobOrder(nodes, order []Node) []Node {
	var out []Node
	for _, nd := range order {
		if slices.ContainsFunc(nodes, func(x Node) bool { return x.Name == nd.Name }) {
			out = append(out, nd)
		}
	}
	return out
}

// deal counts each node's tasks: round-robin, one per node per round,
// each node up to what it holds. The caller checked that they hold n.
func deal(nodes []Node, holds func(Node) int, n int) []int {
	per := make([]int, len(nodes))
	for left := n; left > 0; {
		dealt := false
		for i, nd := range nodes {
			if left > 0 && per[i] < holds(nd) {
				per[i]++
				left--
				dealt = true
			}
		}
		if !dealt {
			panic("steplayout: tasks left that no node holds")
		}
	}
	return per
}

// number gives each node its ranks: block numbers node by node, cyclic
// deals the numbers round-robin over the nodes that still take tasks.
func number(nodes []api.StepNode, per []int, cyclic bool) {
	rank := 0
	if !cyclic {
		for i := range nodes {
			for range per[i] {
				nodes[i].Ranks = append(nodes[i].Ranks, rank)
				rank++
			}
		}
		return
	}
	for round := 0; ; round++ {
		dealt := false
		for i := range nodes {
			if round < per[i] {
				nodes[i].Ranks = append(nodes[i].Ranks, rank)
				rank++
				dealt = true
			}
		}
		if !dealt {
			return
		}
	}
}
