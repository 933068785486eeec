package sched

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"
)

// nowFits answers, while a conservative plan with StartsOnly is built,
// "could any job not yet planned still start now?". A job fits now only
// if some node keeps its CPUs free from now for its whole run time: on
// that node, the fewest CPUs free over [0, dur) is at least its need.
// That minimum only falls as the profile's early part fills up, in an
// overloaded replay within a few hundred reservations, long before the
// queue ends; once no job left passes the test, the rest of the plan
// could only reserve later starts, which the simulator does not use.
//
// The test is necessary, not sufficient (it ignores memory, GPUs,
// partitions, node counts and group limits, and rounds run times down),
// so stopping on it never drops a start; passing only costs time.
//
// Jobs are kept in buckets of run time whose lower bounds grow by at
// most a quarter, each bucket in priority order: jobs leave in priority
// order, so what remains of a bucket is a suffix, and its fewest CPUs a
// suffix minimum. No sort per plan.
type nowFits struct {
	cpus  []int // per bucket, the jobs' CPUs in priority order, then suffix minima
	start [durBuckets + 1]int
	next  [durBuckets]int // first job of each bucket not yet planned
	of    []uint8         // of[k]: the k-th plannable job's bucket
	used  []uint8         // the buckets that hold jobs, shortest first
	// The last test that passed, kept while nothing could have changed
	// its answer: jobs needing at most short CPUs, with run times in
	// buckets whose floor is at most end, found them free on node over
	// [0, end). Most reservations of a deep conservative plan begin
	// after end, so most tests are answered without a scan.
	passed bool
	node   *nodeState
	end    int64
	short  int
}

// durBuckets covers run times up to never: 8 one-step buckets, then 4
// per power of two of the run time in units of 2^30 ns (about a second).
const durBuckets = 4*33 + 3 - 8 + 1

// durBucket is where a run time goes; bucketFloor(durBucket(d)) <= d.
func durBucket(d int64) int {
	u := uint64(d) >> 30
	if u < 8 {
		return int(u)
	}
	l := bits.Len64(u)
	return 4*l + int(u>>(l-3)&3) - 8
}

// floors[b] is bucketFloor(b), looked up at every test.
var floors = func() (t [durBuckets]int64) {
	for b := range t {
		t[b] = bucketFloor(b)
	}
	return t
}()

// bucketFloor is the shortest run time in bucket b.
func bucketFloor(b int) int64 {
	if b < 8 {
		return int64(b) << 30
	}
	l, sub := (b+8)/4, (b+8)%4
	return int64(4+sub) << (l - 3) << 30
}

func newNowFits(plannable []int, reqs []request, sc *scratch) *nowFits {
	of, cpus := sized(sc.fitsOf, len(plannable)), sized(sc.fitsCPUs, len(plannable))
	for k, i := range plannable {
		of[k], cpus[k] = uint8(durBucket(reqs[i].dur)), reqs[i].need.CPUs
	}
	sc.fitsOf, sc.fitsCPUs = of, cpus
	return buildNowFits(of, cpus, sc)
}

// buildNowFits builds the test over jobs in priority order, the k-th of
// run-time bucket of[k] and needing cpus[k] CPUs.
func buildNowFits(of []uint8, cpus []int, sc *scratch) *nowFits {
	f := &sc.fits
	*f = nowFits{cpus: sized(f.cpus, len(of)), of: of, used: f.used[:0]}
	var count [durBuckets]int
	for _, b := range of {
		count[b]++
	}
	for b := range count {
		f.start[b+1] = f.start[b] + count[b]
		f.next[b] = f.start[b]
		if count[b] > 0 {
			f.used = append(f.used, uint8(b))
		}
	}
	for k, b := range of {
		f.cpus[f.next[b]] = cpus[k]
		f.next[b]++
	}
	for b := range count {
		f.next[b] = f.start[b]
		for x := f.start[b+1] - 2; x >= f.start[b]; x-- {
			f.cpus[x] = min(f.cpus[x], f.cpus[x+1])
		}
	}
	return f
}

// remove takes the k-th plannable job out of the test: it is planned.
// Jobs are removed in priority order.
func (f *nowFits) remove(k int) {
	b := f.of[k]
	was := f.fewest(int(b))
	f.next[b]++
	if f.passed && floors[b] <= f.end && was == f.short && f.fewest(int(b)) != was {
		f.passed = false // the job that passed has left
	}
}

// placed tells the test that a job was reserved on nodes from start on:
// the last test's answer stands if its window ends by then.
func (f *nowFits) placed(start int64, nodes []*nodeState) {
	if f.passed && start < f.end && slices.Contains(nodes, f.node) {
		f.passed = false
	}
}

// fewest is the fewest CPUs a remaining job of bucket b needs.
func (f *nowFits) fewest(b int) int {
	if f.next[b] == f.start[b+1] {
		return math.MaxInt
	}
	return f.cpus[f.next[b]]
}

// any reports whether some remaining job might still start now on one
// of nodes. A job whose run time ends within segment i of a node's
// profile (at[i] < dur <= at[i+1]) needs its CPUs free in segments 0..i,
// so it passes if it needs no more than their minimum; so does every
// shorter job that needs as few, which is why the buckets are folded in
// from the shortest.
func (f *nowFits) any(nodes []*nodeState) bool {
	if f.passed {
		return true
	}
	fewest := math.MaxInt
	for _, b := range f.used {
		fewest = min(fewest, f.fewest(int(b)))
	}
	if fewest == math.MaxInt {
		return false
	}
	for _, n := range nodes {
		if f.fitsOn(&n.tl, fewest) {
			f.passed, f.node = true, n
			return true
		}
	}
	return false
}

// fitsOn is any for one node's profile. A block with at least free CPUs
// throughout leaves free as it is, and the shortest need only falls as
// the windows grow, so its last segment answers for all of it.
func (f *nowFits) fitsOn(tl *timeline, fewest int) bool {
	free, shortest, u := math.MaxInt, math.MaxInt, 0
	for b := range tl.blocks {
		blk := &tl.blocks[b]
		first := len(blk.at) - 1 // the segments to test one by one
		if blk.low.CPUs-blk.off.CPUs < free {
			first = 0
		}
		for k := first; k < len(blk.at); k++ {
			p := pos{b, k}
			free = min(free, tl.cpusOf(p))
			if free < fewest {
				return false // no job left fits any longer window here
			}
			for e := tl.endOf(p); u < len(f.used) && floors[f.used[u]] <= e; u++ {
				shortest = min(shortest, f.fewest(int(f.used[u])))
			}
			if shortest <= free {
				f.end, f.short = tl.endOf(p), shortest
				return true
			}
		}
	}
	return false
}

// widestNow answers, while an easy plan with StartsOnly chooses its
// backfill candidates, "how many CPUs does some node keep free from now
// for d?": a job that needs more cannot start now, and after the
// reservations it is built from, starts only lower the answer. On a busy
// machine most candidates fail it, and the rest are far fewer to rank
// and to search for.
//
// On one node, the CPUs free over [0, d) are the minimum over the
// segments that begin before d: the fewest free up to the first segment
// that ends at or after d. Over several nodes it is the most of that
// minimum among all nodes' segments ending at or after d, a suffix
// maximum once the segments are sorted by end.
type widestNow struct {
	ends []int64 // segment ends, ascending
	most []int   // most[k]: the most CPUs free from now until ends[k] or later
}

// newWidestNow builds it from the nodes' profiles, in buf's arrays.
func newWidestNow(nodes []*nodeState, buf widestNow) widestNow {
	w := widestNow{ends: buf.ends[:0], most: buf.most[:0]}
	for _, n := range nodes {
		tl := &n.tl
		fewest := math.MaxInt
		for p := (pos{}); tl.valid(p); p = tl.next(p) {
			if fewest = min(fewest, tl.cpusOf(p)); fewest <= 0 {
				break // nothing longer fits here
			}
			w.ends = append(w.ends, tl.endOf(p))
			w.most = append(w.most, fewest)
		}
	}
	if len(nodes) > 1 {
		sort.Sort(byEnd(w))
	}
	// Suffix maxima, keeping only the last segment of each run of equal
	// answers: a busy node's profile has thousands of segments but few
	// distinct counts of CPUs free from now, so each test is a search of
	// a few entries.
	n := len(w.most)
	for k := n - 2; k >= 0; k-- {
		w.most[k] = max(w.most[k], w.most[k+1])
	}
	kept := 0
	for k := range n {
		if k+1 < n && w.most[k] == w.most[k+1] {
			continue
		}
		w.ends[kept], w.most[kept] = w.ends[k], w.most[k]
		kept++
	}
	w.ends, w.most = w.ends[:kept], w.most[:kept]
	return w
}

// byEnd sorts a widestNow's segments by end, before the suffix maxima.
type byEnd widestNow

func (b byEnd) Len() int           { return len(b.ends) }
func (b byEnd) Less(i, j int) bool { return b.ends[i] < b.ends[j] }
func (b byEnd) Swap(i, j int) {
	b.ends[i], b.ends[j] = b.ends[j], b.ends[i]
	b.most[i], b.most[j] = b.most[j], b.most[i]
}

// cpus is the most CPUs some node keeps free over [0, d), d > 0.
func (w widestNow) cpus(d int64) int {
	k, _ := slices.BinarySearch(w.ends, d)
	if k == len(w.ends) {
		return 0
	}
	return w.most[k]
}

// fits is false when no node keeps r's CPUs free from now for its run
// time, so r cannot start now.
func (w widestNow) fits(r *request) bool {
	switch {
	case r.need.CPUs <= 0:
		return true
	case len(w.most) == 0 || r.need.CPUs > w.most[0]: // more than any node has free now
		return false
	}
	return r.need.CPUs <= w.cpus(max(r.dur, 1))
}

// Headroom is what a conservative plan with StartsOnly left free from
// now, once every job it placed holds its reservation: for a run time d,
// the most CPUs some node keeps free over [now, now+d). The plan stopped
// where no job left could start now, and each of those jobs, had it been
// placed, would only have taken more; so a job ranked behind them all (a
// new arrival, under FCFS priority) can start in a plan of the same
// running jobs only if it needs no more than this. The simulator skips
// the plans of arrivals that fail it: they would reserve the whole queue
// again to start nothing. An EASY plan in priority order gives one too
// (easyHeadroom): what its reservation and its starts left, which a job
// ranked behind them all, tried last, must fit to start.
type Headroom struct {
	w       widestNow
	reached int
}

// Reached is how many jobs of the queue, in priority order, the plan
// came to before it stopped: a caller that hands a later plan only the
// first jobs of a like queue learns from it how many that plan needs.
func (h *Headroom) Reached() int { return h.reached }

// Fits reports whether a job needing cpus for d might start since after
// the plan. It holds while nothing has started or ended but what the plan
// started, and every job ends by its planned end (as in the simulator):
// then no planned end has passed, the profile's first step is still
// ahead, and the CPUs free over [since, since+d) are those over [0,
// since+d). False is certain; true means a plan must decide.
func (h *Headroom) Fits(cpus int, d, since time.Duration) bool {
	if cpus <= 0 {
		return true
	}
	return cpus <= h.w.cpus(max(satAdd(int64(since), int64(d)), 1))
}
