package sched

import (
	"cmp"
	"slices"
	"sort"

	"github.com/corral-hpc/corral/gpu"
)

// rankLimit bounds how many equally early nodes a single-node job compares
// before choosing one (Nomad's "limit" idea): enough to pack well, cheap
// on a 1,000-node partition that is idle.
const rankLimit = 8

// profile is the planner's working state: every up node's availability
// timeline plus the search index over them.
type profile struct {
	nodes []*nodeState // up nodes, in snapshot order
	parts map[string]*partState
	// groups are the group limits, counting running jobs and this
	// plan's starts.
	groups groups
	// sharing: some job does not share freely, so nodes keep their
	// occupants (exclusive.go); without any, none is kept.
	sharing bool

	holes []int // scratch for place
	tails []int
	items itemHeap // scratch for earliestMany
	open  endHeap
}

// release is a running job's allocation on a node coming back.
type release struct {
	pos int // the node's position in Snapshot.Nodes
	at  int64
	res Resources
}

// blockRoom is how many blocks a node's timeline may gain in a plan
// before its list of blocks leaves the scratch array it starts in.
const blockRoom = 4

type partState struct {
	Partition
	ix *partIndex
}

// request is a pending job translated into the planner's terms.
type request struct {
	*Pending
	part  *partState
	need  Resources
	count int   // nodes
	dur   int64 // planned run time; never = unlimited
	// expect is the expected run time (Pending.Expected, at most dur):
	// what backfill candidates are ordered by.
	expect int64
	level  int // index level, -1 = none, levelUnknown until a search
}

// newProfile builds the profile of s. Its working arrays come from sc
// when it is not nil; the profile must then be dropped before sc is
// released.
func newProfile(s Snapshot, sc *scratch) *profile {
	if sc == nil {
		sc = new(scratch)
	}
	p := &profile{parts: make(map[string]*partState, len(s.Partitions)), groups: newGroups(&s), sharing: anyStrict(s)}
	byName := make(map[string]*nodeState, len(s.Nodes))
	for i, n := range s.Nodes {
		if !n.Up {
			continue
		}
		if _, dup := byName[n.Name]; dup {
			continue
		}
		ns := &nodeState{name: n.Name, pos: i, capacity: n.Capacity}
		if len(n.GPUs) > 0 {
			ns.capacity.FGPU = unlimitedFGPU
		}
		byName[n.Name] = ns
		p.nodes = append(p.nodes, ns)
	}
	// Running jobs: free now is capacity minus every allocation; each
	// allocation comes back at its job's expected end. The trace
	// simulator plans with thousands of running jobs on one node at every
	// event, so releases go into one flat slice sorted once (by node, then
	// time) and usage into a slice by node position, not per-node maps.
	sc.indexUsed = 0
	releases := sc.releases[:0]
	used := sized(sc.used, len(s.Nodes))
	clear(used)
	holds := make(map[*nodeState]map[int][]devHold)
	var last *nodeState
	for _, r := range s.Running {
		end := int64(never)
		if !r.End.IsZero() {
			// An overdue job still holds its resources; plan it as
			// ending just after now, never as ended.
			end = max(offset(s.Now, r.End), 1)
		}
		for _, a := range r.Alloc {
			if last == nil || last.name != a.Node { // most jobs share a node with the one before
				last = byName[a.Node]
			}
			ns := last
			if ns == nil {
				continue
			}
			used[ns.pos] = used[ns.pos].Add(a.Resources)
			if p.sharing {
				ns.occ.add(0, end, r.UID, r.Sharing)
			}
			for _, sh := range a.GPUs {
				if holds[ns] == nil {
					holds[ns] = map[int][]devHold{}
				}
				holds[ns][sh.Device] = append(holds[ns][sh.Device], devHold{end: end, share: sh, uid: r.UID})
			}
			if end != never {
				releases = append(releases, release{ns.pos, end, a.Resources})
			}
		}
	}
	// Releases at one time sum to the same free amount in any order, so
	// an unstable sort is enough, and none when the caller listed the
	// running jobs by end already (the trace simulator does).
	byNodeThenTime := func(a, b release) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.at, b.at))
	}
	if !slices.IsSortedFunc(releases, byNodeThenTime) {
		slices.SortFunc(releases, byNodeThenTime)
	}
	sc.releases = releases
	// Each node's timeline takes its blocks' arrays from the plan's arena,
	// and its lists of blocks from windows of two shared arrays, with room
	// for the reservations of a plan to split a few more blocks before a
	// list grows apart.
	sc.blocks.used = 0
	room := len(releases)/blockCap + len(p.nodes)*(1+blockRoom)
	sc.tblocks, sc.starts = sized(sc.tblocks, room), sized(sc.starts, room)
	tblocks, starts := sc.tblocks, sc.starts
	for _, ns := range p.nodes { // in position order, as releases
		free := ns.capacity.Sub(used[ns.pos])
		k := 0
		for k < len(releases) && releases[k].pos == ns.pos {
			k++
		}
		n := k/blockCap + 1 + blockRoom
		ns.tl.init(free, starts[:0:n], tblocks[:0:n], &sc.blocks)
		tblocks, starts = tblocks[n:], starts[n:]
		for _, r := range releases[:k] {
			free = free.Add(r.res)
			ns.tl.appendSegment(r.at, free)
		}
		releases = releases[k:]
		if n := s.Nodes[ns.pos]; len(n.GPUs) > 0 {
			ns.gpus = newNodeGPUs(n, holds[ns])
		}
	}
	// A node alone in every partition it is in keeps no bounds: no tree
	// reads them, and a search on it starts where its caller says.
	type membership struct {
		ps    *partState
		nodes []*nodeState
	}
	var parts []membership
	shared := make(map[*nodeState]bool)
	for _, part := range s.Partitions {
		if _, dup := p.parts[part.Name]; dup {
			continue
		}
		var members []*nodeState
		seen := make(map[*nodeState]bool, len(part.Nodes))
		for _, name := range part.Nodes {
			if ns := byName[name]; ns != nil && !seen[ns] {
				seen[ns] = true
				members = append(members, ns)
			}
		}
		if len(members) > 1 {
			for _, ns := range members {
				shared[ns] = true
			}
		}
		ps := &partState{Partition: part}
		p.parts[part.Name] = ps
		parts = append(parts, membership{ps, members})
	}
	for _, ns := range p.nodes {
		if ns.unindexed = !shared[ns]; !ns.unindexed {
			ns.initBounds()
		}
	}
	for _, m := range parts {
		if len(m.nodes) > 0 {
			m.ps.ix = newPartIndex(m.nodes, sc)
		}
	}
	return p
}

// place reserves req on nodes over [at, at+dur) and refreshes the index.
// It returns the job's shares of each node's devices (parallel to nodes),
// nil when it holds none.
func (p *profile) place(r *request, at int64, nodes []*nodeState) [][]gpu.Share {
	end := satAdd(at, r.dur)
	var shares [][]gpu.Share
	for i, n := range nodes {
		if n.gpuBound(r) {
			if shares == nil {
				shares = make([][]gpu.Share, len(nodes))
			}
			shares[i] = n.reserveGPUs(r, at, end)
		}
		minFree := n.tl.reserve(r.need, at, end)
		if p.sharing {
			n.occ.add(at, end, r.UID, r.Sharing)
		}
		if r.need.CPUs <= 0 {
			continue // the index bounds CPUs only
		}
		if n.unindexed {
			continue
		}
		p.holes, p.tails = n.updateBounds(at, end, minFree, p.holes[:0], p.tails[:0])
		for _, lr := range n.leaves {
			lr.ix.update(lr.leaf, n, p.holes, p.tails)
		}
	}
	return shares
}

// earliest finds the first time t in [from, limit) at which r can start,
// and the nodes to use; never if there is none.
func (p *profile) earliest(r *request, from, limit int64) (int64, []*nodeState) {
	if r.level == levelUnknown {
		r.level = levelOf(r.PerNode, r.dur)
	}
	if r.count <= 1 {
		return p.earliestOne(r, from, limit)
	}
	return p.earliestMany(r, from, limit)
}

// earliestOne is a best-first walk of the partition's tree: a subtree is
// skipped when its best lower bound cannot beat the best start found.
func (p *profile) earliestOne(r *request, from, limit int64) (int64, []*nodeState) {
	ix := r.part.ix
	if len(ix.nodes) == 1 { // one node, as the simulator's machine: nothing to walk
		n := ix.nodes[0]
		if from >= limit || !n.canHold(r) {
			return never, nil
		}
		if t := n.earliest(r, from, limit); t != never {
			return t, n.alone
		}
		return never, nil
	}
	best, found := limit, false
	var ties []*nodeState
	var walk func(v int, b int64)
	walk = func(v int, b int64) { // b: subtree v's bound
		b = max(b, from) // nothing starts before from
		if found {
			if b > best || (b == best && len(ties) >= rankLimit) {
				return
			}
		} else if b >= limit {
			return
		}
		if v >= ix.size {
			n := ix.nodes[v-ix.size]
			if !n.canHold(r) {
				return
			}
			stop := best
			if found {
				stop = satAdd(best, 1)
			}
			t := n.earliest(r, b, stop)
			switch {
			case t == never:
			case !found || t < best:
				best, found = t, true
				ties = append(ties[:0], n)
			case t == best && len(ties) < rankLimit:
				ties = append(ties, n)
			}
			return
		}
		a, c := 2*v, 2*v+1
		ba, bc := ix.bound(a, r.level), ix.bound(c, r.level)
		if bc < ba {
			a, c, ba, bc = c, a, bc, ba
		}
		walk(a, ba)
		walk(c, bc)
	}
	walk(1, ix.bound(1, r.level))
	if !found {
		return never, nil
	}
	return best, p.choose(r, best, ties)
}

// earliestMany finds the first time at which r.count nodes can all run the
// job. Each node's feasible start times form windows [a, b] (a run of
// segments where the job fits, less its duration). Windows are visited in
// order of their start, merged lazily from every node, and nodes enter in
// order of their lower bound from the index, so only windows that open
// before the answer are ever computed. The answer is the first window
// start at which count windows are open at once.
func (p *profile) earliestMany(r *request, from, limit int64) (int64, []*nodeState) {
	ix := r.part.ix
	if len(ix.nodes) < r.count {
		return never, nil
	}
	q := p.items[:0]
	open := p.open[:0]
	q.push(item{key: max(ix.bound(1, r.level), from), v: 1})
	answer := int64(never)
	for len(q) > 0 {
		it := q.pop()
		if it.key >= limit || (answer != never && (it.key > answer || len(open) >= r.count+rankLimit)) {
			break
		}
		switch {
		case it.v < 0: // a window [key, end] of leaf -v-1
			t := it.key
			for len(open) > 0 && open[0].end < t {
				open.pop()
			}
			open.push(it)
			if answer == never && len(open) >= r.count {
				answer = t
			}
			if it.end != never {
				n := ix.nodes[-it.v-1]
				if a, b := n.window(r, satAdd(it.end, 1)); a != never {
					q.push(item{key: a, end: b, v: it.v})
				}
			}
		case int(it.v) >= ix.size: // a leaf: the node's first window
			leaf := int(it.v) - ix.size
			n := ix.nodes[leaf]
			if n.canHold(r) {
				if a, b := n.window(r, it.key); a != never {
					q.push(item{key: a, end: b, v: int32(-leaf - 1)})
				}
			}
		default:
			for _, c := range [2]int{2 * int(it.v), 2*int(it.v) + 1} {
				if b := ix.bound(c, r.level); b < limit && (answer == never || b <= answer) {
					q.push(item{key: max(b, it.key), v: int32(c)})
				}
			}
		}
	}
	p.items, p.open = q, open
	if answer == never {
		return never, nil
	}
	nodes := make([]*nodeState, 0, len(open))
	for _, w := range open {
		if w.end >= answer {
			nodes = append(nodes, ix.nodes[-w.v-1])
		}
	}
	return answer, p.choose(r, answer, nodes)
}

// item is an entry of the merge: a subtree v of the index (v > 0) keyed by
// its lower bound, or a window [key, end] of leaf -v-1 (v < 0).
type item struct {
	key, end int64
	v        int32
}

// less orders by key; at equal keys windows come first, then by v, so
// the merge is deterministic.
func (a item) less(b item) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.v < b.v
}

type itemHeap []item

func (h *itemHeap) push(x item) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *itemHeap) pop() item {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if l+1 < len(s) && s[l+1].less(s[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// endHeap holds the open windows, earliest end first.
type endHeap []item

func (h *endHeap) push(x item) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[i].end >= s[p].end {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *endHeap) pop() {
	s := *h
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].end < s[m].end {
			m = l
		}
		if l+1 < len(s) && s[l+1].end < s[m].end {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}

// choose ranks the nodes that can start r at t and keeps the best r.count.
func (p *profile) choose(r *request, t int64, nodes []*nodeState) []*nodeState {
	k := max(r.count, 1)
	if len(nodes) == k && k == 1 {
		return nodes
	}
	cands := make([]Candidate, len(nodes))
	byPos := make(map[int]*nodeState, len(nodes))
	for i, n := range nodes {
		cands[i] = Candidate{Node: n.name, Free: n.tl.freeAt(t), pos: n.pos}
		byPos[n.pos] = n
	}
	src := &FitsFilter{Source: &sliceIterator{cands: cands}, Need: r.need}
	rank := &BinPackRank{Source: src, Need: r.need, Capacity: func(pos int) Resources { return byPos[pos].capacity }}
	top := selectTop(rank, k)
	out := make([]*nodeState, len(top))
	for i, c := range top {
		out[i] = byPos[c.pos]
	}
	sort.Slice(out, func(a, b int) bool { return out[a].pos < out[b].pos })
	return out
}
