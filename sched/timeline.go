package sched

import (
	"math"
	"slices"
	"time"
)

// never is the time offset that stands for "not within any horizon": the
// end of a job without a time limit, or the answer "this cannot start".
const never = math.MaxInt64

// Times inside the planner are int64 nanoseconds after Snapshot.Now: cheap
// to compare and add, and 0 means "now".

// satAdd adds two non-negative offsets, saturating at never.
func satAdd(a, b int64) int64 {
	if a >= never-b {
		return never
	}
	return a + b
}

// offset converts an absolute time into an offset after now, clamped to
// [0, never].
func offset(now, t time.Time) int64 {
	d := t.Sub(now) // saturates at the extremes of time.Duration
	if d < 0 {
		return 0
	}
	return int64(d)
}

// segment says how much of a node is free from at until the next segment
// begins (the last segment extends forever).
type segment struct {
	at   int64
	free Resources
}

// timeline is one node's availability profile: free resources as a step
// function of time, starting now. Reservations only ever subtract from it,
// so every earliest-start answer it gives can only move later as a plan
// grows — the search index relies on that.
//
// The segments are kept in blocks of at most blockCap consecutive ones.
// A reservation over whole blocks subtracts from each block's off instead
// of from each segment, and a search skips a block in one step when the
// job fits all of it (low) or none of it (high). A busy node's profile in
// a deep queue has hundreds of segments and a long job spans a hundred of
// them; touching each one, twice per placement (the search, then the
// reservation), was half of a conservative replay's time.
//
// Per-device GPU capacity (a job's GPU fraction must fit on one device)
// is one more profile per device kept next to this one by nodeState
// (gpus.go).
type timeline struct {
	starts []int64 // starts[b] == blocks[b].at[0]; starts[0] == 0; strictly increasing
	blocks []tblock
	arena  *blockArena // where new blocks' arrays come from; nil: allocated
}

// blockCap is the most segments one block holds; a full block that gains
// one splits in two halves.
const blockCap = 16

// tblock is a run of consecutive segments. A segment's free amount is
// free[k] less off. low is the componentwise minimum of the stored
// amounts, and high at least their maximum (a reservation over part of a
// block does not lower it: a bound too high only costs a search a step).
type tblock struct {
	at   []int64 // strictly increasing
	free []Resources
	off  Resources
	low  Resources
	high Resources
}

// pos is a segment's place: block b, k-th segment in it.
type pos struct{ b, k int }

// blockArena hands out blocks' arrays from larger ones, reused from plan
// to plan (scratch): a plan adds blocks as its reservations split them.
type blockArena struct {
	at   []int64
	free []Resources
	used int // blockCap-sized pieces handed out
}

// take returns empty arrays of capacity blockCap. When the arena is used
// up it starts a larger one; blocks already handed out keep theirs.
func (a *blockArena) take() ([]int64, []Resources) {
	if a == nil {
		return make([]int64, 0, blockCap), make([]Resources, 0, blockCap)
	}
	if (a.used+1)*blockCap > len(a.at) {
		n := max(2*len(a.at), 64*blockCap)
		a.at, a.free, a.used = make([]int64, n), make([]Resources, n), 0
	}
	i := a.used * blockCap
	a.used++
	return a.at[i : i : i+blockCap], a.free[i : i : i+blockCap]
}

func newTimeline(free Resources) timeline {
	var tl timeline
	tl.init(free, nil, nil, nil)
	return tl
}

// init starts the timeline with one segment, free from now on, in the
// given arrays (nil: allocated).
func (tl *timeline) init(free Resources, starts []int64, blocks []tblock, arena *blockArena) {
	at, frees := arena.take()
	tl.arena = arena
	tl.starts = append(starts[:0], 0)
	tl.blocks = append(blocks[:0], tblock{at: append(at, 0), free: append(frees, free), low: free, high: free})
}

// appendSegment adds a segment after the last one (building only).
func (tl *timeline) appendSegment(at int64, free Resources) {
	b := &tl.blocks[len(tl.blocks)-1]
	last := len(b.at) - 1
	if b.at[last] == at {
		b.free[last] = free.Add(b.off)
		b.low, b.high = b.bounds()
		return
	}
	if len(b.at) == blockCap {
		a, f := tl.arena.take()
		tl.starts = append(tl.starts, at)
		tl.blocks = append(tl.blocks, tblock{at: append(a, at), free: append(f, free), low: free, high: free})
		return
	}
	stored := free.Add(b.off)
	b.at = append(b.at, at)
	b.free = append(b.free, stored)
	b.low, b.high = b.low.minWith(stored), b.high.maxWith(stored)
}

// bounds returns the exact componentwise minimum and maximum of the
// block's stored amounts.
func (b *tblock) bounds() (low, high Resources) {
	low, high = b.free[0], b.free[0]
	for _, f := range b.free[1:] {
		low, high = low.minWith(f), high.maxWith(f)
	}
	return low, high
}

// segments returns a copy of the profile, for tests and debugging.
func (tl *timeline) segments() []segment {
	var out []segment
	for p := (pos{}); tl.valid(p); p = tl.next(p) {
		out = append(out, segment{tl.atOf(p), tl.freeOf(p)})
	}
	return out
}

// find returns the segment that contains t (t >= 0).
func (tl *timeline) find(t int64) pos {
	b := 0
	if len(tl.starts) > 1 { // most nodes' profiles are one block
		b = searchStarts(tl.starts, t)
	}
	return pos{b, searchStarts(tl.blocks[b].at, t)}
}

// searchStarts returns the last i with s[i] <= t, given s[0] <= t.
func searchStarts(s []int64, t int64) int {
	lo, hi := 0, len(s) // s[lo] <= t < s[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// holding returns the segment that holds t, the last one for never.
func (tl *timeline) holding(t int64) pos {
	if t == never {
		return tl.last()
	}
	return tl.find(t)
}

func (tl *timeline) valid(p pos) bool { return p.b < len(tl.blocks) }

// next is the segment after p (not valid after the last).
func (tl *timeline) next(p pos) pos {
	if p.k+1 < len(tl.blocks[p.b].at) {
		return pos{p.b, p.k + 1}
	}
	return pos{p.b + 1, 0}
}

// prev is the segment before p; p.b < 0 before the first.
func (tl *timeline) prev(p pos) pos {
	if p.k > 0 {
		return pos{p.b, p.k - 1}
	}
	if p.b == 0 {
		return pos{-1, 0}
	}
	return pos{p.b - 1, len(tl.blocks[p.b-1].at) - 1}
}

// last is the final segment, which lasts forever.
func (tl *timeline) last() pos {
	b := len(tl.blocks) - 1
	return pos{b, len(tl.blocks[b].at) - 1}
}

func (tl *timeline) atOf(p pos) int64 { return tl.blocks[p.b].at[p.k] }

func (tl *timeline) freeOf(p pos) Resources {
	b := &tl.blocks[p.b]
	return b.free[p.k].Sub(b.off)
}

func (tl *timeline) cpusOf(p pos) int {
	b := &tl.blocks[p.b]
	return b.free[p.k].CPUs - b.off.CPUs
}

// endOf returns when segment p ends.
func (tl *timeline) endOf(p pos) int64 {
	if at := tl.blocks[p.b].at; p.k+1 < len(at) {
		return at[p.k+1]
	}
	return tl.blockEnd(p.b)
}

// blockEnd returns when block b's last segment ends.
func (tl *timeline) blockEnd(b int) int64 {
	if b+1 < len(tl.starts) {
		return tl.starts[b+1]
	}
	return never
}

// freeAt returns what is free at time t.
func (tl *timeline) freeAt(t int64) Resources { return tl.freeOf(tl.find(t)) }

// earliest returns the first time t >= from at which req fits throughout
// [t, t+dur), or never if there is none before limit.
func (tl *timeline) earliest(req Resources, dur, from, limit int64) int64 {
	t, _ := tl.earliestRun(req, dur, from, limit)
	return t
}

// earliestRun is earliest, and a segment of the run of segments req fits
// from t on: the one t+dur reaches into, or one after it.
func (tl *timeline) earliestRun(req Resources, dur, from, limit int64) (int64, pos) {
	p := tl.find(from)
	cand := from
	nb := len(tl.blocks)
	for b, k := p.b, p.k; b < nb; b, k = b+1, 0 {
		if cand >= limit {
			return never, pos{}
		}
		blk := &tl.blocks[b]
		need := req.Add(blk.off) // fits a segment iff need fits its stored amount
		if need.Fits(blk.low) {  // the run from cand goes on to the block's end
			if e := tl.blockEnd(b); e == never || satAdd(cand, dur) <= e {
				return cand, pos{b, len(blk.at) - 1}
			}
			continue
		}
		if !need.Fits(blk.high) { // no segment of the block fits
			if b+1 == nb {
				return never, pos{}
			}
			cand = tl.starts[b+1]
			continue
		}
		blockEnd := tl.blockEnd(b)
		for ; k < len(blk.at); k++ {
			if cand >= limit {
				return never, pos{}
			}
			e := blockEnd
			if k+1 < len(blk.at) {
				e = blk.at[k+1]
			}
			if !need.Fits(blk.free[k]) {
				if e == never {
					return never, pos{}
				}
				cand = e
				continue
			}
			if e == never || satAdd(cand, dur) <= e {
				return cand, pos{b, k}
			}
		}
	}
	return never, pos{}
}

// window returns the first window of feasible starts at or after from:
// every t in [a, b] can start req for dur (b = never: any later start
// too). a = never when there is none.
func (tl *timeline) window(req Resources, dur, from int64) (a, b int64) {
	a, p := tl.earliestRun(req, dur, from, never)
	if a == never {
		return never, never
	}
	for q := tl.next(p); tl.valid(q) && req.Fits(tl.freeOf(q)); q = tl.next(q) {
		p = q
	}
	e := tl.endOf(p)
	if e == never || dur == never {
		return a, never
	}
	return a, e - dur
}

// split makes sure a segment begins exactly at t and returns it. When it
// splits a full block, moved says where the block's second half went
// (to block moved.b+1, from the block's moved.k-th segment on); moved.b
// < 0 if no block split.
func (tl *timeline) split(t int64) (p, moved pos) {
	p = tl.find(t)
	moved = pos{-1, 0}
	blk := &tl.blocks[p.b]
	if blk.at[p.k] == t {
		return p, moved
	}
	if len(blk.at) == blockCap {
		h := blockCap / 2
		a, f := tl.arena.take()
		nb := tblock{at: append(a, blk.at[h:]...), free: append(f, blk.free[h:]...), off: blk.off}
		blk.at, blk.free = blk.at[:h], blk.free[:h]
		blk.low, blk.high = blk.bounds()
		nb.low, nb.high = nb.bounds()
		tl.blocks = slices.Insert(tl.blocks, p.b+1, nb)
		tl.starts = slices.Insert(tl.starts, p.b+1, nb.at[0])
		moved = pos{p.b, h}
		if p.k >= h {
			p = pos{p.b + 1, p.k - h}
		}
		blk = &tl.blocks[p.b]
	}
	// The new segment starts with its predecessor's amount: same block,
	// same off, so the stored amount is copied as it is.
	blk.at = slices.Insert(blk.at, p.k+1, t)
	blk.free = slices.Insert(blk.free, p.k+1, blk.free[p.k])
	return pos{p.b, p.k + 1}, moved
}

// reserve subtracts req from the timeline over [from, to) and returns the
// fewest CPUs left free in that range. The caller has checked
// that it fits (earliest); reserve does not check again.
func (tl *timeline) reserve(req Resources, from, to int64) (minCPUs int) {
	minCPUs = math.MaxInt
	if to <= from {
		return minCPUs
	}
	i, _ := tl.split(from)
	j := pos{len(tl.blocks), 0}
	if to != never {
		var moved pos
		j, moved = tl.split(to)
		if moved.b == i.b && i.k >= moved.k {
			i = pos{i.b + 1, i.k - moved.k}
		}
	}
	for b, k := i.b, i.k; b < len(tl.blocks) && (b < j.b || b == j.b && k < j.k); b, k = b+1, 0 {
		blk := &tl.blocks[b]
		if k == 0 && b < j.b { // the whole block
			blk.off = blk.off.Add(req)
			minCPUs = min(minCPUs, blk.low.CPUs-blk.off.CPUs)
			continue
		}
		end := len(blk.at)
		if b == j.b {
			end = j.k
		}
		low, fewest := blk.low, math.MaxInt
		for ; k < end; k++ {
			f := blk.free[k].Sub(req)
			blk.free[k] = f
			low = low.minWith(f)
			fewest = min(fewest, f.CPUs)
		}
		blk.low = low
		minCPUs = min(minCPUs, fewest-blk.off.CPUs)
	}
	// Keep the profile short: neighbours with equal free resources merge.
	// The segment at to goes first: deleting it leaves i where it is.
	if to != never {
		tl.mergeWithPrev(j)
	}
	tl.mergeWithPrev(i)
	return minCPUs
}

// mergeWithPrev deletes segment p if it is as free as the one before it.
func (tl *timeline) mergeWithPrev(p pos) {
	q := tl.prev(p)
	if q.b < 0 || tl.freeOf(p) != tl.freeOf(q) {
		return
	}
	blk := &tl.blocks[p.b]
	if len(blk.at) == 1 {
		tl.blocks = slices.Delete(tl.blocks, p.b, p.b+1)
		tl.starts = slices.Delete(tl.starts, p.b, p.b+1)
		return
	}
	blk.at = slices.Delete(blk.at, p.k, p.k+1)
	blk.free = slices.Delete(blk.free, p.k, p.k+1)
	if p.k == 0 {
		tl.starts[p.b] = blk.at[0]
	}
	// The deleted amount may have been the block's least: keep low exact,
	// as reserve's answer (the fewest CPUs left) is read from it.
	blk.low, blk.high = blk.bounds()
}

// lastShort returns, scanning back from segment p, the last segment with
// fewer than need CPUs free that ends after from; q.b < 0 if there is none.
func (tl *timeline) lastShort(p pos, from int64, need int) pos {
	for p.b >= 0 {
		blk := &tl.blocks[p.b]
		if blk.low.CPUs-blk.off.CPUs >= need { // none in this block
			if tl.starts[p.b] <= from {
				return pos{-1, 0}
			}
			p = tl.prev(pos{p.b, 0})
			continue
		}
		for ; p.k >= 0; p.k-- {
			if blk.free[p.k].CPUs-blk.off.CPUs < need {
				return p
			}
			if blk.at[p.k] <= from {
				return pos{-1, 0}
			}
		}
		p = tl.prev(pos{p.b, 0})
	}
	return p
}

// minWith and maxWith are the componentwise minimum and maximum.
func (r Resources) minWith(o Resources) Resources {
	return Resources{CPUs: min(r.CPUs, o.CPUs), MemBytes: min(r.MemBytes, o.MemBytes), FGPU: min(r.FGPU, o.FGPU)}
}

func (r Resources) maxWith(o Resources) Resources {
	return Resources{CPUs: max(r.CPUs, o.CPUs), MemBytes: max(r.MemBytes, o.MemBytes), FGPU: max(r.FGPU, o.FGPU)}
}
