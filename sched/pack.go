package sched

import "math"

// Backfill set selection (Backfill.Pack), after Shmueli and Feitelson's
// LOS: instead of starting EASY's candidates greedily in their order,
// choose among the first few that fit now the set that uses the most
// processors now, by a 0/1 knapsack over their CPUs, start that set, and
// only then fill what is left greedily. Greedy order leaves holes a
// combination of later candidates would fill; in overload those holes
// are the utilization, and so the backlog's drain time, that smaller
// waits have cost.

// packScale bounds the knapsack's capacity: wider partitions count CPUs
// in units of capacity/packScale, which may make the chosen set a little
// worse, never wrong (every start is still checked on the timeline).
const packScale = 4096

// packStart starts, among the first n candidates of order that fit now
// on their own, the set with the most CPUs that fits the free CPUs of
// their partition now, or with fill the most processor time before the
// partition's next reservation (fillValues); ties go to sets of earlier
// candidates. Each start is placed and checked as any other, so a set
// member that the reservations or the other members leave no room for
// does not start.
func packStart(p *profile, order []int, reqs []request, out []outcome, n int, fill bool) {
	byPart := make(map[*partState][]int)
	var parts []*partState
	for _, i := range order {
		r := &reqs[i]
		if len(byPart[r.part]) >= n || out[i].planned || out[i].reason != "" || r.need.CPUs <= 0 || r.dur == never {
			continue
		}
		if t, _ := p.earliest(r, 0, 1); t != 0 {
			continue
		}
		if byPart[r.part] == nil {
			parts = append(parts, r.part)
		}
		byPart[r.part] = append(byPart[r.part], i)
	}
	for _, part := range parts {
		items := byPart[part]
		if len(items) < 2 {
			continue // one candidate: greedy is the same
		}
		free := 0
		for _, ns := range part.ix.nodes {
			free += ns.tl.freeAt(0).CPUs
		}
		weights := make([]int, len(items))
		values := make([]int64, len(items))
		for k, i := range items {
			weights[k] = reqs[i].count * reqs[i].need.CPUs
			values[k] = int64(weights[k])
		}
		if fill {
			values = fillValues(items, weights, reqs, out, part)
		}
		for _, k := range knapsack(weights, values, free) {
			i := items[k]
			if p.mayStart(&reqs[i], &out[i]) && startNow(p, &reqs[i], &out[i]) {
				p.started(&reqs[i], &out[i])
			}
		}
	}
}

// fillValues are PackFill's values of items, processor time: each one's
// CPUs times its expected run time if it is expected to end by the
// partition's next reservation (the earliest planned start after now),
// or if the partition has none; else its CPUs for one second, so that a
// job that would run past the reservation is chosen only into room that
// nothing ending before it fills.
func fillValues(items, weights []int, reqs []request, out []outcome, part *partState) []int64 {
	next := int64(never)
	for i := range out {
		if o := &out[i]; o.planned && o.start > 0 && o.start != never && reqs[i].part == part {
			next = min(next, o.start)
		}
	}
	// Each value is capped so that no sum of them overflows: a wide job
	// with a limit of months is worth more CPU-nanoseconds than an int64
	// holds.
	limit := math.MaxInt64 / int64(len(items)+1)
	values := make([]int64, len(items))
	for k, i := range items {
		values[k] = int64(weights[k])
		if d := max(reqs[i].expect, 1); next == never || reqs[i].expect <= next {
			if values[k] > limit/d {
				values[k] = limit
			} else {
				values[k] *= d
			}
		}
	}
	return values
}

// knapsack returns, in increasing order, the indexes of a subset of items
// with the largest total value whose weights add up to at most capacity,
// taking an earlier item whenever a set with it is as good as one
// without. Capacities over packScale are scaled down, rounding weights
// up, so that a chosen set never exceeds the true capacity.
func knapsack(weights []int, values []int64, capacity int) []int {
	if capacity <= 0 {
		return nil
	}
	unit := 1
	if capacity > packScale {
		unit = (capacity + packScale - 1) / packScale
	}
	c := capacity / unit
	best := make([]int64, c+1) // best[x]: the largest value within x
	take := make([][]bool, len(weights))
	// Items are visited last to first so that the walk back from the
	// full capacity meets them first to last and prefers earlier ones.
	for k := len(weights) - 1; k >= 0; k-- {
		w := (weights[k] + unit - 1) / unit
		take[k] = make([]bool, c+1)
		for x := c; x >= w; x-- {
			if v := best[x-w] + values[k]; v >= best[x] && w > 0 {
				best[x], take[k][x] = v, true
			}
		}
	}
	var chosen []int
	x := c
	for k := range weights {
		if take[k][x] {
			chosen = append(chosen, k)
			x -= (weights[k] + unit - 1) / unit
		}
	}
	return chosen
}
