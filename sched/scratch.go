package sched

import "sync"

// scratch is one plan's per-job working arrays, reused from plan to plan:
// a trace replay plans tens of thousands of times over a queue thousands
// deep, and allocating them anew was most of what it allocated, and a
// tenth of its time went to collecting them. Nothing a Plan returns
// points into them.
type scratch struct {
	keys       []pendingKey
	jobs       []*Pending
	out        []outcome
	reqs       []request
	plannable  []int
	candidates []int
	order      []int
	widest     widestNow
	heap       wfpHeap

	// the profile's arrays (newProfile): running jobs' releases, usage
	// by node, timelines' blocks, index trees
	releases  []release
	used      []Resources
	tblocks   []tblock
	starts    []int64
	blocks    blockArena
	index     []int64
	indexUsed int
	fits      nowFits
	fitsOf    []uint8 // the fits-now test's input (buildNowFits)
	fitsCPUs  []int
	// written: out and reqs hold nothing from this plan beyond it (a
	// lazy plan leaves the jobs it did not reach alone).
	written int
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// release clears what the arrays point to, so that a pooled scratch
// holds no snapshot alive, and returns it to the pool.
func (sc *scratch) release() {
	clear(sc.jobs)
	clear(sc.out[:sc.written])
	clear(sc.reqs[:sc.written])
	scratchPool.Put(sc)
}

// sized returns buf with length n: buf's own array when it is large
// enough. A plan writes only within the length it asked for, and release
// clears that, so the arrays of out and reqs come back all zero; keys and
// jobs are written whole before they are read.
func sized[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// indexTrees returns n entries of the index arena for one partition's
// trees; newProfile starts each plan at its front. Entries are written
// before they are read. A partition that does not fit gets a larger
// array, which the next plan starts from.
func (sc *scratch) indexTrees(n int) []int64 {
	if sc.indexUsed+n > len(sc.index) {
		sc.index = make([]int64, max(2*len(sc.index), n))
		sc.indexUsed = 0
	}
	t := sc.index[sc.indexUsed : sc.indexUsed+n : sc.indexUsed+n]
	sc.indexUsed += n
	return t
}
