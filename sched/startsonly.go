package sched

import "time"

// startsOnlyByWFP is what planEASY does with its backfill candidates in
// WFP order when only starts are wanted (StartsOnly, no Pack): try each
// in order and start those that fit now. On an overloaded machine
// hundreds of candidates may fit the free CPUs while the first start or
// two leaves room for none of the rest, so instead of ranking them all
// and trying each, the candidates are taken best first from a heap, a
// candidate is skipped without a search when no node keeps its CPUs free
// for its run time (widestNow, rebuilt after each start), and the loop
// ends once no node has as many CPUs free as the narrowest candidate
// needs. The order is sortByWFP's exactly: score, highest first, then
// the candidate's place in the list, so the same jobs start.
func startsOnlyByWFP(p *profile, candidates []int, reqs []request, out []outcome, now time.Time, ranked bool, sc *scratch) {
	widest := newWidestNow(p.nodes, sc.widest)
	defer func() { sc.widest = widest }()
	h := wfpHeap(sc.heap[:0])
	defer func() { sc.heap = h[:0] }()
	narrowest := -1 // fewest CPUs a candidate in the heap needs; -1: none yet
	for k, i := range candidates {
		r := &reqs[i]
		if !widest.fits(r) {
			continue
		}
		x := wfpCandidate{i: i, k: k, score: r.wfp(now)}
		if ranked {
			x.score *= rankWeight(k, len(candidates))
		}
		h = append(h, x)
		if narrowest < 0 || r.need.CPUs < narrowest {
			narrowest = r.need.CPUs
		}
	}
	h.init()
	for len(h) > 0 {
		i := h.pop()
		r := &reqs[i]
		if out[i].planned || !widest.fits(r) || !p.mayStart(r, &out[i]) || !startNow(p, r, &out[i]) {
			continue
		}
		p.started(r, &out[i])
		widest = newWidestNow(p.nodes, widest)
		if widest.cpus(1) < narrowest {
			return // nothing left fits now
		}
	}
}

// wfpCandidate is a backfill candidate with its WFP score; k, its place
// in the candidate list, breaks ties as sortByWFP's stable sort does.
type wfpCandidate struct {
	score float64
	k, i  int
}

func (a wfpCandidate) before(b wfpCandidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.k < b.k
}

// wfpHeap is a binary heap of candidates, the first in WFP order on top.
type wfpHeap []wfpCandidate

func (h wfpHeap) init() {
	for v := len(h)/2 - 1; v >= 0; v-- {
		h.down(v)
	}
}

// pop removes the first candidate and returns its job's index.
func (h *wfpHeap) pop() int {
	old := *h
	top := old[0].i
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h wfpHeap) down(v int) {
	for {
		c := 2*v + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[v]) {
			return
		}
		h[v], h[c] = h[c], h[v]
		v = c
	}
}
