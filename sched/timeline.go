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
// Segment starts and free amounts are kept in two parallel slices so the
// binary search over starts touches as little memory as possible.
//
// Per-device GPU capacity (a job's GPU fraction must fit on one device)
// is one more profile per device kept next to this one by nodeState
// (gpus.go).
type timeline struct {
	at   []int64     // at[0] == 0; strictly increasing
	free []Resources // free[i] holds from at[i] until at[i+1]
}

func newTimeline(free Resources) timeline {
	return timeline{at: []int64{0}, free: []Resources{free}}
}

// appendSegment adds a segment after the last one (building only).
func (tl *timeline) appendSegment(at int64, free Resources) {
	if last := len(tl.at) - 1; tl.at[last] == at {
		tl.free[last] = free
		return
	}
	tl.at = append(tl.at, at)
	tl.free = append(tl.free, free)
}

// segments returns a copy of the profile, for tests and debugging.
func (tl *timeline) segments() []segment {
	out := make([]segment, len(tl.at))
	for i := range tl.at {
		out[i] = segment{tl.at[i], tl.free[i]}
	}
	return out
}

// find returns the index of the segment that contains t (t >= 0).
func (tl *timeline) find(t int64) int {
	at := tl.at
	lo, hi := 0, len(at) // at[lo] <= t < at[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if at[mid] <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// end returns when segment i ends.
func (tl *timeline) end(i int) int64 {
	if i+1 < len(tl.at) {
		return tl.at[i+1]
	}
	return never
}

// freeAt returns what is free at time t.
func (tl *timeline) freeAt(t int64) Resources { return tl.free[tl.find(t)] }

// earliest returns the first time t >= from at which req fits throughout
// [t, t+dur), or never if there is none before limit.
func (tl *timeline) earliest(req Resources, dur, from, limit int64) int64 {
	n := len(tl.at)
	cand := from
	for i := tl.find(from); i < n; i++ {
		if cand >= limit {
			return never
		}
		if !req.Fits(tl.free[i]) {
			if i+1 == n {
				return never
			}
			cand = tl.at[i+1]
			continue
		}
		if e := tl.end(i); e == never || satAdd(cand, dur) <= e {
			return cand
		}
	}
	return never
}

// window returns the first window of feasible starts at or after from:
// every t in [a, b] can start req for dur (b = never: any later start
// too). a = never when there is none.
func (tl *timeline) window(req Resources, dur, from int64) (a, b int64) {
	a = tl.earliest(req, dur, from, never)
	if a == never {
		return never, never
	}
	i := tl.find(a)
	for i+1 < len(tl.at) && req.Fits(tl.free[i+1]) {
		i++
	}
	e := tl.end(i)
	if e == never || dur == never {
		return a, never
	}
	return a, e - dur
}

// split makes sure a segment begins exactly at t and returns its index.
func (tl *timeline) split(t int64) int {
	i := tl.find(t)
	if tl.at[i] == t {
		return i
	}
	tl.at = slices.Insert(tl.at, i+1, t)
	tl.free = slices.Insert(tl.free, i+1, tl.free[i])
	return i + 1
}

// reserve subtracts req from the timeline over [from, to) and returns the
// fewest CPUs left free in that range. The caller has checked that it fits
// (earliest); reserve does not check again. If short is not nil, short[c]
// becomes the end of the range's last segment left with fewer CPUs free
// than cpuThresholds[c], -1 if none: what the index's tails need
// (tailsAfter), found in the same pass.
func (tl *timeline) reserve(req Resources, from, to int64, short *[cpuLevels]int64) (minCPUs int) {
	minCPUs = math.MaxInt
	if to <= from {
		if short != nil {
			*short = noShort
		}
		return minCPUs
	}
	i := tl.split(from)
	j := len(tl.at)
	if to != never {
		j = tl.split(to)
	}
	var last [cpuLevels + 1]int // by how many thresholds its free CPUs reach: the last such segment, + 1
	for k := i; k < j; k++ {
		tl.free[k] = tl.free[k].Sub(req)
		f := tl.free[k].CPUs
		minCPUs = min(minCPUs, f)
		last[levelsReached(f)] = k + 1
	}
	if short != nil {
		// A segment reaching l thresholds is short of threshold l and
		// every larger one.
		k := 0
		for c := range cpuLevels {
			k = max(k, last[c])
			short[c] = -1
			if k > 0 {
				short[c] = tl.end(k - 1)
			}
		}
	}
	// Keep the profile short: neighbours with equal free resources merge.
	if j < len(tl.at) && tl.free[j] == tl.free[j-1] {
		tl.del(j)
	}
	if i > 0 && tl.free[i] == tl.free[i-1] {
		tl.del(i)
	}
	return minCPUs
}

// noShort is reserve's answer for an empty range.
var noShort = func() (s [cpuLevels]int64) {
	for c := range s {
		s[c] = -1
	}
	return s
}()

// levelsReached is how many CPU thresholds free CPUs reach.
func levelsReached(free int) int {
	switch {
	case free < 1:
		return 0
	case free < len(cpuLevelOf):
		return int(cpuLevelOf[free]) + 1
	}
	return cpuLevels
}

func (tl *timeline) del(i int) {
	tl.at = slices.Delete(tl.at, i, i+1)
	tl.free = slices.Delete(tl.free, i, i+1)
}
