package sim

import "math"

// widths counts the pending jobs by width, so that a replay knows the
// narrowest one at every event without a pass over the queue: on a log
// with thousands of jobs waiting, that pass, through scattered job
// records, was a twentieth of a conservative replay.
type widths struct {
	count []int32 // count[p]: pending jobs of p processors
	least int     // the narrowest width with a count, when any is
	n     int     // pending jobs counted
}

func (w *widths) add(procs int) {
	if procs >= len(w.count) {
		w.count = append(w.count, make([]int32, procs+1-len(w.count))...)
	}
	w.count[procs]++
	if w.n == 0 || procs < w.least {
		w.least = procs
	}
	w.n++
}

func (w *widths) remove(procs int) {
	w.count[procs]--
	w.n--
	if w.n == 0 || procs != w.least {
		return
	}
	for w.count[w.least] == 0 { // another job is at least as wide
		w.least++
	}
}

// narrowest is the fewest processors a pending job needs; MaxInt when
// none is pending.
func (w *widths) narrowest() int {
	if w.n == 0 {
		return math.MaxInt
	}
	return w.least
}
