package sched

// A node alone in each of its partitions (the simulator's machine, or a
// site's one-node partition) has no index tree to keep: its bounds serve
// only the searches on it, one threshold at a time. So a placement there
// only widens, for each threshold it may have changed, the span of time
// that threshold has missed, and a search brings its own threshold up to
// date first. On RICC's log the simulator's one node kept all fourteen
// thresholds' bounds after every reservation, and most of them were not
// read before the next one changed them again.
//
// Catching up over the union of the missed reservations gives the bounds
// a reservation at a time would: only CPUs taken within the span changed,
// so a hole whose stretch misses it is still exact, one it reaches is
// searched again from its old start (bounds only move later), and the
// tail moves past the span's last segment now short of the threshold.

// span is a range of time [from, to); empty when from >= to.
type span struct{ from, to int64 }

func (s span) empty() bool { return s.from >= s.to }

// widen makes s cover [from, to) too.
func (s *span) widen(from, to int64) {
	if s.empty() {
		*s = span{from, to}
		return
	}
	s.from, s.to = min(s.from, from), max(s.to, to)
}

// markStale records a reservation over [from, to) that left at least
// minFree CPUs free there: thresholds up to minFree did not change.
func (n *nodeState) markStale(from, to int64, minFree int) {
	for c := 0; c < cpuLevels && cpuThresholds[c] <= n.capacity.CPUs; c++ {
		if cpuThresholds[c] > minFree {
			n.stale[c].widen(from, to)
		}
	}
}

// catchUp brings the bounds of level l's threshold up to date.
func (n *nodeState) catchUp(l int) {
	if l < 0 {
		return
	}
	c := l / numDur
	s := n.stale[c]
	if s.empty() {
		return
	}
	n.stale[c] = span{}
	scan := scanStart{at: -1}
	n.updateLevel(c, s.from, s.to, n.tailAfter(c, s.from, s.to), &scan, nil, nil)
}

// tailAfter is threshold c's tail once CPUs were taken over [from, to):
// tailsAfter for one threshold.
func (n *nodeState) tailAfter(c int, from, to int64) int64 {
	tail := n.tail[c]
	if tail == never || tail >= to {
		return tail
	}
	tl := &n.tl
	if q := tl.lastShort(tl.holding(to), from, cpuThresholds[c]); q.b >= 0 {
		tail = max(tail, tl.endOf(q))
	}
	return tail
}
