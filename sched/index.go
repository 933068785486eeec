package sched

import "time"

// The search index answers "which nodes could possibly start this job
// before time T?" without looking at every node's timeline.
//
// For a CPU threshold c and a duration threshold d, a node's bound is the
// earliest time it has at least c CPUs free for at least d. A job that
// needs >= c CPUs for >= d cannot start on the node before that bound.
// Reservations only take resources away, so bounds only grow while a plan
// is built and stay valid for nodes a placement did not touch.
//
// Each bound is kept as two parts, because placements mostly happen at the
// end of a node's schedule: tail[c], where the node's final, endless run
// of >= c free CPUs begins (any duration fits there), and hole[c][d], the
// first long enough stretch before that tail. The bound is their minimum.
// A placement at the tail then moves a few tail values instead of every
// duration level.
//
// Each partition keeps tournament trees (min per subtree) over its nodes,
// one per hole level and one per tail level, so a search visits only
// subtrees whose bound beats the best start found so far.

// cpuThresholds are the CPU counts the index keeps bounds for; a job uses
// the largest one not above its request.
var cpuThresholds = [...]int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128}

const cpuLevels = len(cpuThresholds)

// durLevels are common time limits; a job uses the largest not above its own.
var durLevels = [...]int64{
	0,
	int64(5 * time.Minute),
	int64(10 * time.Minute),
	int64(15 * time.Minute),
	int64(20 * time.Minute),
	int64(30 * time.Minute),
	int64(45 * time.Minute),
	int64(time.Hour),
	int64(90 * time.Minute),
	int64(2 * time.Hour),
	int64(3 * time.Hour),
	int64(4 * time.Hour),
	int64(6 * time.Hour),
	int64(8 * time.Hour),
	int64(12 * time.Hour),
	int64(16 * time.Hour),
	int64(24 * time.Hour),
	int64(36 * time.Hour),
	int64(48 * time.Hour),
	int64(72 * time.Hour),
	int64(7 * 24 * time.Hour),
}

const (
	numDur    = len(durLevels)
	numLevels = cpuLevels * numDur
)

// levelUnknown is a request's level before its first search.
const levelUnknown = -2

// levelOf picks the tightest bound that is still a lower bound for a job
// needing req for dur; -1 when the index cannot help (no CPUs requested).
func levelOf(req Resources, dur int64) int {
	if req.CPUs < 1 {
		return -1
	}
	c := cpuLevels - 1
	if req.CPUs < len(cpuLevelOf) {
		c = int(cpuLevelOf[req.CPUs])
	}
	d, hi := 0, numDur // durLevels[d] <= dur < durLevels[hi]; durLevels[0] is 0
	for hi-d > 1 {
		if mid := (d + hi) / 2; durLevels[mid] <= dur {
			d = mid
		} else {
			hi = mid
		}
	}
	return c*numDur + d
}

// cpuLevelOf[n] is the largest CPU threshold index not above n, for n up
// to the largest threshold: every job's admission looks it up.
var cpuLevelOf = func() []uint8 {
	t := make([]uint8, cpuThresholds[cpuLevels-1]+1)
	for n := range t {
		for c := 0; c < cpuLevels && cpuThresholds[c] <= n; c++ {
			t[n] = uint8(c)
		}
	}
	return t
}()

// nodeState is one up node while a plan is built.
type nodeState struct {
	name     string
	pos      int // position in Snapshot.Nodes: the deterministic tie-breaker
	capacity Resources
	tl       timeline
	hole     [numLevels]int64 // first stretch before the tail, per (c, d); never if none
	tail     [cpuLevels]int64 // start of the endless final run, per c; never if none
	leaves   []leafRef        // where the node sits in partition indexes
	alone    []*nodeState     // just this node: a placement's node list, shared
	gpus     *nodeGPUs        // per-device profiles; nil without devices
	occ      occupancy        // the jobs on it, for sharing rules
	// unindexed: every partition it is in has it alone, so no tree reads
	// its bounds and it keeps none (hole and tail stay 0, a bound that
	// holds for any job). A search there starts from its caller's
	// lower bound: in a conservative plan, the start floor. Keeping the
	// bounds for the simulator's one node cost more than the searches
	// they shortened (docs/benchmarks.md).
	unindexed bool
}

type leafRef struct {
	ix   *partIndex
	leaf int
}

// bound is the node's lower bound for level l.
func (n *nodeState) bound(l int) int64 {
	if l < 0 {
		return 0
	}
	return min(n.hole[l], n.tail[l/numDur])
}

// computeTail returns where the final run with >= need CPUs free begins:
// the end of the last segment short of need (lastShort, which steps over
// blocks with none), or now if none is.
func (n *nodeState) computeTail(need int) int64 {
	tl := &n.tl
	q := tl.lastShort(tl.last(), -1, need)
	if q.b < 0 {
		return 0
	}
	return tl.endOf(q)
}

// tailsAfter returns every threshold's tail after CPUs were reserved over
// [from, to). Free CPUs only went down, and only there, so a final run can
// only have lost a prefix: a tail before to moves to the end of the
// range's last segment now short of its threshold, if that is later. (A
// tail at or after to cannot move: the range is before it. The segment at
// to, had it merged with a short one before it, would be short too, and
// before such a tail.) Rescanning each final run instead made a plan with
// thousands of reservations on one large node quadratic. The last short
// segment of a larger threshold is at or after a smaller one's, so one
// scan back from the range's end serves every threshold.
func (n *nodeState) tailsAfter(from, to int64) [cpuLevels]int64 {
	tails := n.tail
	moving := 0 // thresholds [0, moving) have a tail before to
	for moving < cpuLevels && tails[moving] != never && tails[moving] < to {
		moving++
	}
	if moving == 0 {
		return tails
	}
	tl := &n.tl
	p := tl.holding(to) // not short of any threshold moving: a final run holds it
	for c := moving - 1; c >= 0; c-- {
		if p = tl.lastShort(p, from, cpuThresholds[c]); p.b < 0 {
			break // nothing in the range is short of this threshold or a smaller one
		}
		tails[c] = max(tails[c], tl.endOf(p))
	}
	return tails
}

// initBounds computes every bound from the timeline: per threshold, the
// tail, then one pass over the runs before it, in which the first run long
// enough for each duration level is that level's hole (holes grow with
// the duration, so the levels fill in order).
func (n *nodeState) initBounds() {
	tl := &n.tl
	for c := 0; c < cpuLevels; c++ {
		need := cpuThresholds[c]
		row := n.hole[c*numDur : (c+1)*numDur]
		next := 0
		n.tail[c] = never
		if need <= n.capacity.CPUs {
			tail := n.computeTail(need)
			n.tail[c] = tail
			runStart := int64(-1)
			for p := (pos{}); next < numDur && tl.valid(p) && tl.atOf(p) < tail; p = tl.next(p) {
				if tl.cpusOf(p) < need {
					runStart = -1
					continue
				}
				if runStart < 0 {
					runStart = tl.atOf(p)
				}
				runLen := tl.endOf(p) - runStart // before the tail, so never infinite
				for next < numDur && durLevels[next] <= runLen {
					row[next] = runStart
					next++
				}
			}
		}
		for ; next < numDur; next++ {
			row[next] = never
		}
	}
}

// updateBounds brings the bounds up to date after CPUs were reserved over
// [from, to), leaving at least minFree CPUs free there, and appends the
// hole and tail levels that changed. Thresholds up to minFree see the same
// runs as before and are skipped.
func (n *nodeState) updateBounds(from, to int64, minFree int, holes, tails []int) ([]int, []int) {
	newTails := n.tailsAfter(from, to)
	scan := scanStart{at: -1}
	for c := 0; c < cpuLevels && cpuThresholds[c] <= n.capacity.CPUs; c++ {
		if cpuThresholds[c] <= minFree {
			continue
		}
		holes, tails = n.updateLevel(c, from, to, newTails[c], &scan, holes, tails)
	}
	return holes, tails
}

// scanStart is where updateLevel's last scan began: thresholds in a row
// often begin at the same instant, found once.
type scanStart struct {
	at int64
	p  pos
}

// updateLevel brings threshold c's bounds up to date after CPUs were
// taken over [from, to) (by one or more reservations), its tail being
// newTail now, and appends the levels that changed. A hole whose stretch
// misses the range is still exact; one it hits is searched again from its
// old start; a level without a hole is searched in the stretch the tail
// has just left behind, if it moved. One pass serves every duration.
func (n *nodeState) updateLevel(c int, from, to, newTail int64, scan *scanStart, holes, tails []int) ([]int, []int) {
	tl := &n.tl
	var starts [numDur]int64
	need := cpuThresholds[c]
	oldTail := n.tail[c]
	if newTail != oldTail {
		n.tail[c] = newTail
		tails = append(tails, c)
	}
	row := n.hole[c*numDur : (c+1)*numDur]
	var todo [numDur]int8 // duration levels to search again
	nt, lo := 0, int64(never)
	// Holes and their ends grow with d: the ones the reservation hits
	// are a middle range, the holes that do not exist a suffix.
	// The first hit is found by bisection: a twentieth of a replay went
	// to stepping through the levels before it.
	d, hi := 0, numDur // the holes before d end by from; the one at hi does not
	for d < hi {
		if mid := int(uint(d+hi) >> 1); row[mid] != never && satAdd(row[mid], max(durLevels[mid], 1)) <= from {
			d = mid + 1
		} else {
			hi = mid
		}
	}
	for ; d < numDur && row[d] < to; d++ {
		starts[d] = row[d]
		todo[nt] = int8(d)
		nt++
		lo = min(lo, row[d])
	}
	if newTail != oldTail && oldTail != never {
		for d = numDur - 1; d >= 0 && row[d] == never; d-- {
			starts[d] = oldTail
			todo[nt] = int8(d)
			nt++
			lo = min(lo, oldTail)
		}
	}
	left := nt // todo[:left] are still searching
	runStart := int64(-1)
	if left > 0 && lo != scan.at {
		*scan = scanStart{lo, tl.find(lo)}
	}
	for p := scan.p; left > 0 && tl.valid(p) && tl.atOf(p) < newTail; p = tl.next(p) {
		blk := &tl.blocks[p.b]
		if blk.high.CPUs-blk.off.CPUs < need { // nothing left in the block has need
			runStart = -1
			p.k = len(blk.at) - 1
			continue
		}
		if tl.cpusOf(p) < need {
			runStart = -1
			continue
		}
		if runStart < 0 {
			runStart = tl.atOf(p)
		}
		if blk.low.CPUs-blk.off.CPUs >= need && tl.blockEnd(p.b) <= newTail {
			// The run goes on to the block's end: a stretch found at
			// one of its segments begins where it would at the last.
			p.k = len(blk.at) - 1
		}
		e := tl.endOf(p)
		for k := 0; k < left; {
			d := todo[k]
			if s := max(runStart, starts[d]); s < e && (e == never || e-s >= durLevels[d]) {
				if s != row[d] {
					row[d] = s
					holes = append(holes, c*numDur+int(d))
				}
				left--
				todo[k], todo[left] = todo[left], todo[k]
				continue
			}
			k++
		}
	}
	for _, d := range todo[:left] { // no stretch long enough before the tail
		if row[d] != never {
			row[d] = never
			holes = append(holes, c*numDur+int(d))
		}
	}
	return holes, tails
}

// partIndex is a set of tournament trees over the up nodes of one
// partition: leaves are nodes, each inner entry the minimum of its two
// children (v = 1 is the root, leaves are size..2*size-1).
type partIndex struct {
	nodes []*nodeState // leaves, in partition order
	size  int          // number of leaves, a power of two >= len(nodes)
	// Level-major, because a search reads one level across many subtrees:
	// entry l*2*size + v is subtree v's minimum.
	holeMin []int64 // numLevels trees
	tailMin []int64 // cpuLevels trees
}

// newPartIndex builds the index of nodes, its trees in sc's arrays.
func newPartIndex(nodes []*nodeState, sc *scratch) *partIndex {
	size := 1
	for size < len(nodes) {
		size *= 2
	}
	nh, nt := 2*size*numLevels, 2*size*cpuLevels
	trees := sc.indexTrees(nh + nt)
	ix := &partIndex{nodes: nodes, size: size, holeMin: trees[:nh:nh], tailMin: trees[nh : nh+nt : nh+nt]}
	for leaf, n := range nodes {
		n.leaves = append(n.leaves, leafRef{ix, leaf})
		if n.alone == nil {
			n.alone = []*nodeState{n}
		}
	}
	build := func(row []int64, value func(n *nodeState) int64) {
		for leaf := 0; leaf < size; leaf++ {
			row[size+leaf] = never
			if leaf < len(nodes) {
				row[size+leaf] = value(nodes[leaf])
			}
		}
		for v := size - 1; v >= 1; v-- {
			row[v] = min(row[2*v], row[2*v+1])
		}
	}
	for l := 0; l < numLevels; l++ {
		build(ix.row(ix.holeMin, l), func(n *nodeState) int64 { return n.hole[l] })
	}
	for c := 0; c < cpuLevels; c++ {
		build(ix.row(ix.tailMin, c), func(n *nodeState) int64 { return n.tail[c] })
	}
	return ix
}

func (ix *partIndex) row(trees []int64, l int) []int64 {
	return trees[l*2*ix.size : (l+1)*2*ix.size]
}

// bound is the smallest lower bound in subtree v for level l.
func (ix *partIndex) bound(v, l int) int64 {
	if l < 0 {
		return 0
	}
	return min(ix.holeMin[l*2*ix.size+v], ix.tailMin[(l/numDur)*2*ix.size+v])
}

// update refreshes the paths above a leaf for the levels that changed.
func (ix *partIndex) update(leaf int, n *nodeState, holes, tails []int) {
	for _, l := range holes {
		ix.set(ix.row(ix.holeMin, l), leaf, n.hole[l])
	}
	for _, c := range tails {
		ix.set(ix.row(ix.tailMin, c), leaf, n.tail[c])
	}
}

func (ix *partIndex) set(row []int64, leaf int, value int64) {
	v := ix.size + leaf
	row[v] = value
	for v > 1 {
		p := v / 2
		m := min(row[2*p], row[2*p+1])
		if m == row[p] {
			return
		}
		row[p] = m
		v = p
	}
}
