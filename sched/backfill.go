package sched

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// Mode says which pending jobs hold reservations.
type Mode string

const (
	// Conservative gives every pending job a reservation: a job may start
	// out of order only if it delays no job ahead of it.
	Conservative Mode = "conservative"
	// EASY reserves for the top job of each partition only; later jobs may
	// start now if they do not delay that reservation.
	EASY Mode = "easy"
	// FCFS does not backfill: in each partition, jobs start in priority
	// order and the first one that does not fit stops the rest. Nothing is
	// reserved, so a job of another partition sharing nodes may start.
	FCFS Mode = "fcfs"
)

// ParseMode accepts conservative, easy or fcfs (any case).
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Conservative, EASY, FCFS} {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown backfill mode %q (valid: conservative, easy, fcfs)", s)
}

// Order is the order in which EASY considers jobs for backfilling.
type Order string

const (
	// ByPriority tries backfill candidates in priority order.
	ByPriority Order = "priority"
	// ShortestFirst tries the shortest planned run time first (EASY-SJBF),
	// then priority order.
	ShortestFirst Order = "shortest"
	// SmallestArea tries the smallest planned area (run time x CPUs) first,
	// then priority order: a long narrow job and a short wide one that
	// cost the machine the same are tried alike (Carastan-Santos et al.).
	SmallestArea Order = "area"
	// LargestSlowdown tries first the job whose slowdown so far, (wait +
	// planned run time) / planned run time, is largest: short jobs come
	// first, and a long job's turn comes as it waits.
	LargestSlowdown Order = "slowdown"
	// WFP tries first the largest (wait / planned run time)^3 x CPUs
	// (Tang et al., 2009, Argonne's Cobalt): short jobs first, as
	// slowdown, but a wide job's turn comes sooner as it waits.
	WFP Order = "wfp"
	// RankedWFP is WFP weighed by priority: from 2 for the top
	// candidate to 1 for the last, so of two jobs that have waited alike
	// relative to their size, the higher priority goes first.
	RankedWFP Order = "rwfp"
)

// ParseOrder accepts priority, shortest, area, slowdown, wfp or rwfp (any case).
func ParseOrder(s string) (Order, error) {
	for _, o := range []Order{ByPriority, ShortestFirst, SmallestArea, LargestSlowdown, WFP, RankedWFP} {
		if strings.EqualFold(s, string(o)) {
			return o, nil
		}
	}
	return "", fmt.Errorf("unknown backfill order %q (valid: priority, shortest, area, slowdown, wfp, rwfp)", s)
}

// Backfill is the backfill planner. Every pending job within Depth gets a
// planned start time, node set and reason; jobs planned to start now are
// returned as Starts.
//
// Run times are the job's time limit, else the partition's DefaultTime,
// else its MaxTime, else unlimited. A running job holds its resources until Running.End.
// Placements are exact against a per-node availability timeline, so no
// plan overcommits a node at any time and no backfilled job delays a
// reservation.
type Backfill struct {
	Mode  Mode  // "" means Conservative
	Depth int   // jobs to plan, in priority order; 0 = the whole queue
	Order Order // EASY backfill order; "" means ByPriority
	// StartsOnly returns Plan.Starts alone, with Plan.Pending empty, and
	// skips the start-time estimates that decide nothing (EASY's and FCFS's
	// jobs without a reservation). Which jobs start is the same. The trace
	// simulator, which needs only starts, sets it.
	StartsOnly bool
	// GuardAfter, if set, plans every job that has been eligible at
	// least this long before all others, oldest first, each with a
	// reservation: no job that became eligible later, whatever its
	// priority, can delay them, so a job that priorities would keep
	// behind newcomers forever (fairshare, size) still starts. Before
	// GuardAfter, priority alone decides. It applies to EASY and
	// Conservative.
	GuardAfter time.Duration
	// GuardReserve, if set, caps how many guarded jobs of a partition
	// hold a reservation at once: the oldest GuardReserve of them. The
	// others are planned as any job, by priority; each is reserved in
	// turn as the older ones start, so no job waits without bound (EASY's
	// guarantee for its head job). 0 reserves for every guarded job.
	GuardReserve int
	// GuardWindow, if set, reserves for a guarded job beyond the
	// oldest of its partition only if it can start within the window;
	// the others are planned as any job, by priority, each reserved when
	// it is the oldest or can start soon (guard.go). In overload almost
	// every job is guarded, and reserving for all of them is
	// conservative backfilling. 0 reserves for every guarded job.
	GuardWindow time.Duration
	// GuardOverlap, if set, also reserves for a guarded job beyond the
	// oldest if it can start before the oldest's reservation ends, so
	// that the machine drains for it while the oldest runs, as behind
	// stacked reservations (guard.go).
	GuardOverlap bool
	// Pack, if set, starts EASY's backfill candidates by set instead of
	// one by one: among the first Pack candidates that fit now, the set
	// that uses the most CPUs (pack.go), then the rest greedily.
	Pack int
	// PackFill, with Pack, chooses the set that uses the most processor
	// time before the partition's next reservation (pack.go) instead of
	// the most CPUs now: it fills the holes of a drain for a wide job,
	// where short-first orders lose utilization in overload. Off in the
	// stock configuration; a site turns it on with BackfillPackFill=YES
	// (docs/scheduling.md measures it).
	PackFill bool
	// GuardFairStart, if set, also guards a job once it has waited this
	// share of the wait its fair start promised (FairStart, fairstart.go),
	// and at least GuardFairMin; GuardAfter, if set, stays the longest a
	// job waits unguarded. The plan returns the fair starts it computes.
	GuardFairStart float64
	GuardFairMin   time.Duration
	// ReserveOldest, if set, also guards the ReserveOldest jobs of each
	// partition that have been eligible longest (at least
	// ReserveOldestAfter), whatever their priority: each starts now if
	// it fits, else holds a reservation that no later job can delay
	// (EASY's for its head, for the N oldest), so every job, once among
	// them, starts within the time limits of the jobs ahead of it. They
	// take EASY's reservation from the top job by priority, even in a
	// plan where they all start now (docs/scheduling.md measures the
	// alternatives).
	ReserveOldest int
	// ReserveOldestAfter, if set, counts a job among the oldest only once
	// it has been eligible this long: before that, priority alone picks
	// the job that holds EASY's reservation, so a light user's new job
	// goes before a heavy user's that has waited less.
	ReserveOldestAfter time.Duration
}

var _ Planner = Backfill{}

// DefaultBackfill is the stock planner (docs/scheduling.md, "The default
// policy"): EASY, whose reservations go to the DefaultReserveOldest jobs
// of each partition that have waited longest, once they have waited
// DefaultReserveOldestAfter, whatever their priority, so that no job
// waits without bound; before that, the top job by priority holds EASY's
// reservation. The other jobs backfill in RankedWFP order, so priority
// (fairshare) and how long a job has waited for its size decide who
// goes first.
func DefaultBackfill() Backfill {
	return Backfill{Mode: EASY, Order: RankedWFP, ReserveOldest: DefaultReserveOldest,
		ReserveOldestAfter: DefaultReserveOldestAfter}
}

// DefaultReserveOldest is how many of each partition's longest-waiting
// jobs the stock planner reserves for: EASY's one reservation for its head
// job, doubled. docs/scheduling.md measures 1 to 4 on eighteen traces.
const DefaultReserveOldest = 2

// DefaultReserveOldestAfter is how long priority alone decides who holds
// EASY's reservation: a light user's job goes before a heavy user's for
// the first ten minutes; after that, waiting counts. The longer this
// lasts, the more of a light user's work passes a heavy user's backlog
// and the longer the backlog's last job waits: an hour cost 1.85 times
// EASY's maximum wait on METACENTRUM's first 40,000 jobs
// (docs/scheduling.md measures 0, 10 minutes and an hour).
const DefaultReserveOldestAfter = 10 * time.Minute

// outcome is what the planner decided for one job.
type outcome struct {
	start   int64 // never = no estimate
	nodes   []*nodeState
	reason  api.Reason // set only for jobs that are not planned normally
	planned bool
	gpus    [][]gpu.Share // shares per node, parallel to nodes
}

// Plan implements Planner.
func (b Backfill) Plan(s Snapshot) Plan {
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	p := newProfile(s, sc)
	sc.jobs = sized(sc.jobs, len(s.Pending))
	sc.out = sized(sc.out, len(s.Pending))
	sc.reqs = sized(sc.reqs, len(s.Pending))
	sc.written = len(s.Pending)
	// jobs are pointers into s.Pending in priority order. A queue already
	// in that order (the simulator keeps its own so) is checked as it is
	// admitted, in one pass over the jobs: a separate pass over a queue
	// of thousands, at every plan, was a twentieth of a replay's time.
	jobs := sc.jobs
	for i := range s.Pending {
		jobs[i] = &s.Pending[i]
	}
	guards := (b.GuardAfter > 0 || b.UsesFairStarts() || b.ReserveOldest > 0) && b.Mode != FCFS
	// A conservative plan that reports starts only translates each job
	// when it comes to it: in a deep queue most are never reached.
	lazy := b.Mode == Conservative && b.StartsOnly && !guards && b.Depth == 0
	ad := admission{p: p, jobs: jobs, out: sc.out, reqs: sc.reqs, lazy: lazy, check: true}
	if lazy {
		sc.fitsOf, sc.fitsCPUs = sized(sc.fitsOf, len(jobs)), sized(sc.fitsCPUs, len(jobs))
		ad.fitsOf, ad.fitsCPUs = sc.fitsOf, sc.fitsCPUs
	}
	plannable, deep, inOrder := b.admitAll(&ad, sc.plannable[:0])
	if !inOrder {
		sc.keys = sized(sc.keys, len(s.Pending))
		jobs = sortPendingByKeys(s.Pending, sc.keys, jobs)
		ad.jobs, ad.check, ad.written = jobs, false, 0
		clear(sc.out) // what the pass out of order wrote, where lazy admission skips
		plannable, deep, _ = b.admitAll(&ad, plannable[:0])
	}
	sc.plannable = plannable
	out, reqs := sc.out, sc.reqs

	// EASY's one reservation per partition is a guarded job's when that
	// is also the partition's top job.
	reserved := make(map[*partState]bool)
	var fair []FairStart
	if guards {
		admitted := append(plannable[:len(plannable):len(plannable)], deep...)
		var byID map[uint64]time.Time
		if b.UsesFairStarts() {
			fair = fairStarts(s, admitted, reqs)
			byID = make(map[uint64]time.Time, len(fair))
			for _, f := range fair {
				byID[f.JobID] = f.At
			}
		}
		guarded := b.guardedBy(admitted, reqs, s.Now, byID)
		guarded = firstPerPartition(guarded, reqs, b.GuardReserve)
		isGuarded := make([]bool, len(jobs))
		for _, i := range guarded {
			isGuarded[i] = true
		}
		b.planGuarded(p, guarded, reqs, out, isGuarded)
		// The reservation is taken if the partition's top job still
		// waiting is guarded; a guarded top job that starts now passes it
		// on to the next, as EASY's head does.
		top := make(map[*partState]bool) // partitions whose top job is seen
		for _, i := range plannable {
			o := &out[i]
			if r := &reqs[i]; !top[r.part] && o.reason == "" && !(o.planned && o.start == 0) {
				top[r.part], reserved[r.part] = true, isGuarded[i]
			}
		}
		if b.ReserveOldest > 0 {
			for _, i := range guarded {
				reserved[reqs[i].part] = true // the oldest hold EASY's reservations
			}
		}
		plannable = slices.DeleteFunc(plannable, func(i int) bool { return isGuarded[i] })
	}
	reached := 0
	switch {
	case b.Mode == EASY:
		reached = b.planEASY(p, plannable, reqs, out, reserved, s.Now, sc)
	case b.Mode == FCFS:
		planFCFS(p, plannable, reqs, out, b.StartsOnly)
	case lazy:
		fits := buildNowFits(sc.fitsOf[:len(plannable)], sc.fitsCPUs[:len(plannable)], sc)
		reached = planConservative(p, plannable, jobs, reqs, out, fits)
		sc.written = max(ad.written, reached) // release clears no more
	default:
		var fits *nowFits
		if b.StartsOnly {
			fits = newNowFits(plannable, reqs, sc)
		}
		planConservative(p, plannable, nil, reqs, out, fits)
	}
	plan := assemble(s.Now, jobs, out, b.StartsOnly)
	plan.FairStarts = fair
	if b.StartsOnly && !guards && len(deep) == 0 && (b.Mode == Conservative || b.easyHeadroom(p)) {
		plan.Headroom = &Headroom{newWidestNow(p.nodes, widestNow{}), reached}
	}
	return plan
}

// easyHeadroom says whether an EASY plan that reports starts only can
// give a Headroom: only if it tries its candidates in priority order, one
// at a time, so that a job ranked behind them all is tried last, on what
// they left; and only with one partition, whose top job, reserved for
// before any candidate starts, is the first job admitted. (A second
// partition's top job could be any job, and would be reserved for before
// the candidates of the first start.)
func (b Backfill) easyHeadroom(p *profile) bool {
	return b.Mode == EASY && b.Pack == 0 && (b.Order == "" || b.Order == ByPriority) && len(p.parts) == 1
}

// admission is what admitAll works on: jobs in the order to check,
// and where their requests and outcomes go (indexes as in jobs).
type admission struct {
	p     *profile
	jobs  []*Pending
	out   []outcome
	reqs  []request
	check bool // stop at the first job out of priority order
	// lazy: plannable jobs are only checked, not translated; their
	// run-time buckets and CPUs go to fitsOf and fitsCPUs (by position
	// among the plannable) for the fits-now test.
	lazy     bool
	fitsOf   []uint8
	fitsCPUs []int
	written  int // lazy: one past the last outcome written
}

// admitAll admits the jobs and returns the plannable ones and those
// beyond Depth, in order; inOrder is false if it stopped at a job out of
// order.
func (b Backfill) admitAll(ad *admission, plannable []int) (_, deep []int, inOrder bool) {
	var last *partState // most jobs share a partition: look it up once
	jobs, out := ad.jobs, ad.out
	for i, j := range jobs {
		if ad.check && i > 0 && !pendingBefore(jobs[i-1], j) {
			return plannable, deep, false
		}
		if last == nil || last.Name != j.Partition {
			last = ad.p.parts[j.Partition]
		}
		reason, dur := ad.p.admissible(j, last)
		if reason == "" && ad.lazy {
			// out[i] is left zero (release cleared it) until the job is
			// reached: its start is set then.
			k := len(plannable)
			ad.fitsOf[k], ad.fitsCPUs[k] = uint8(durBucket(dur)), j.PerNode.CPUs
			plannable = append(plannable, i)
			continue
		}
		out[i] = outcome{start: never} // a pass stopped out of order left its marks
		ad.written = i + 1
		switch {
		case reason != "":
			out[i].reason = reason
		case b.Depth > 0 && len(plannable) >= b.Depth:
			translate(j, last, dur, &ad.reqs[i])
			out[i].reason = api.ReasonPriority
			deep = append(deep, i)
		default:
			translate(j, last, dur, &ad.reqs[i])
			plannable = append(plannable, i)
		}
	}
	return plannable, deep, true
}

// firstPerPartition keeps the first n jobs of each partition, all if n
// is 0.
func firstPerPartition(jobs []int, reqs []request, n int) []int {
	if n <= 0 {
		return jobs
	}
	seen := make(map[*partState]int)
	return slices.DeleteFunc(jobs, func(i int) bool {
		seen[reqs[i].part]++
		return seen[reqs[i].part] > n
	})
}

// sortPending orders jobs exactly as SortByPriority does (priority, then
// submit time, then ID, then input order), as pointers into in: long
// queues are neither copied nor moved.
func sortPending(in []Pending) []*Pending {
	return sortPendingInto(in, make([]pendingKey, len(in)), make([]*Pending, len(in)))
}

// pendingBefore says whether x goes before y in priority order; only the
// input position could break a tie it leaves.
func pendingBefore(x, y *Pending) bool {
	if x.Priority != y.Priority {
		return x.Priority > y.Priority
	}
	if c := x.Submit.Compare(y.Submit); c != 0 {
		return c < 0
	}
	return x.ID < y.ID
}

type pendingKey struct {
	priority, sec int64
	id            uint64
	nsec, i       int32
}

// sortPendingInto is sortPending with its key and result arrays given,
// each as long as in. A queue already in order (the simulator keeps its
// own so) is checked in one pass; any other is sorted over compact keys,
// not the jobs: comparing jobs where they lie was a tenth of a replay of
// a long queue. Seconds and nanoseconds order times as
// time.Time.Compare does.
func sortPendingInto(in []Pending, keys []pendingKey, out []*Pending) []*Pending {
	sorted := true
	for i := 1; i < len(in) && sorted; i++ {
		sorted = pendingBefore(&in[i-1], &in[i])
	}
	if sorted {
		for i := range in {
			out[i] = &in[i]
		}
		return out
	}
	return sortPendingByKeys(in, keys, out)
}

// sortPendingByKeys is sortPendingInto without the check.
func sortPendingByKeys(in []Pending, keys []pendingKey, out []*Pending) []*Pending {
	for i := range in {
		j := &in[i]
		keys[i] = pendingKey{j.Priority, j.Submit.Unix(), j.ID, int32(j.Submit.Nanosecond()), int32(i)}
	}
	slices.SortFunc(keys, func(x, y pendingKey) int {
		if x.priority != y.priority {
			return cmp.Compare(y.priority, x.priority)
		}
		return cmp.Or(cmp.Compare(x.sec, y.sec), cmp.Compare(x.nsec, y.nsec), cmp.Compare(x.id, y.id), cmp.Compare(x.i, y.i))
	})
	for k := range keys {
		out[k] = &in[keys[k].i]
	}
	return out
}

// admissible checks what can be checked without a timeline. It returns
// why the job cannot be planned, or its planned run time (never =
// unlimited).
func (p *profile) admissible(j *Pending, part *partState) (api.Reason, int64) {
	if j.Blocked != "" {
		return j.Blocked, 0
	}
	if why := p.groups.over(j); why != "" {
		return why, 0
	}
	if part == nil || part.ix == nil {
		return api.ReasonNodeDown, 0
	}
	dur, ok := plannedRun(j, part)
	if !ok {
		return api.ReasonPartitionTimeLimit, 0
	}
	return "", dur
}

// plannedRun is the run time a job is planned for in its partition
// (never = unlimited); false if it is over the partition's limit.
func plannedRun(j *Pending, part *partState) (int64, bool) {
	limit := j.TimeLimit
	if limit <= 0 {
		limit = part.DefaultTime // as Slurm: the default, else the maximum
	}
	if limit <= 0 {
		limit = part.MaxTime
	}
	if part.MaxTime > 0 && limit > part.MaxTime {
		return 0, false
	}
	if limit > 0 {
		return int64(limit), true
	}
	return never, true
}

// translate puts an admissible job into the planner's terms. The index
// level is left for the first search (most of a long queue is never
// searched for).
func translate(j *Pending, part *partState, dur int64, r *request) {
	need := j.PerNode
	need.FGPU += int(gpu.GPUs(j.GPUs, gpu.DefaultPerGPU)) // what whole GPUs take of a pool
	expect := dur
	if j.Expected > 0 && int64(j.Expected) < dur {
		expect = int64(j.Expected)
	}
	*r = request{
		Pending: j, part: part, need: need,
		count: max(j.NodeCount, 1), dur: dur, expect: expect, level: levelUnknown,
	}
}

// mayStart reports whether r's groups let it start now, counting the
// starts made so far; if not, o takes the group's reason and r is planned
// no further.
func (p *profile) mayStart(r *request, o *outcome) bool {
	if o.reason != "" {
		return false
	}
	o.reason = p.groups.over(r.Pending)
	return o.reason == ""
}

// started counts r in its groups if o starts it now.
func (p *profile) started(r *request, o *outcome) {
	if o.planned && o.start == 0 {
		p.groups.join(r.Pending)
	}
}

// planOne gives r its earliest start at or after from and reserves it.
func planOne(p *profile, r *request, from int64, o *outcome) {
	o.planned = true
	t, nodes := p.earliest(r, from, never)
	if t == never {
		return // can never run on the up nodes: reported as Resources, no estimate
	}
	o.gpus = p.place(r, t, nodes)
	o.start, o.nodes = t, nodes
}

// planConservative reserves for every job in priority order. A job's
// reservation depends only on the jobs before it, so with startsOnly the
// plan stops once no job left could start now: none finds its CPUs free
// for its whole run time on any node (nowFits). The rest could only be
// reserved for later, which starts nothing. On a large machine with a
// long queue the reservations behind that point were most of a replay's
// time. A job searches from where an easier job's search ended
// (startFloor).
func planConservative(p *profile, plannable []int, lazy []*Pending, reqs []request, out []outcome, fits *nowFits) (reached int) {
	var floor startFloor
	var last *partState
	for k, i := range plannable {
		if fits != nil {
			if !fits.any(p.nodes) {
				return reached
			}
			fits.remove(k)
		}
		r := &reqs[i]
		if lazy != nil { // admitted, not yet translated
			reached = i + 1
			j := lazy[i]
			if last == nil || last.Name != j.Partition {
				last = p.parts[j.Partition]
			}
			dur, _ := plannedRun(j, last) // admissible said it is within the limit
			translate(j, last, dur, r)
			out[i].start = never
		}
		if !p.mayStart(r, &out[i]) {
			continue
		}
		planOne(p, r, floor.of(r), &out[i])
		if fits != nil && out[i].start != never {
			fits.placed(out[i].start, out[i].nodes)
		}
		floor.add(r, out[i].start)
		p.started(r, &out[i])
	}
	return reached
}

// startNow starts r now if it fits without touching any reservation.
func startNow(p *profile, r *request, o *outcome) bool {
	t, nodes := p.earliest(r, 0, 1)
	if t != 0 {
		return false
	}
	o.gpus = p.place(r, 0, nodes)
	o.start, o.nodes, o.planned = 0, nodes, true
	return true
}

// planEASY reserves for the top job of each partition not yet reserved,
// and starts later jobs now where they delay no reservation. It returns
// one past the last job (in priority order) it reserved for or started.
func (b Backfill) planEASY(p *profile, plannable []int, reqs []request, out []outcome, reserved map[*partState]bool, now time.Time, sc *scratch) (reached int) {
	candidates := sc.candidates[:0]
	defer func() { sc.candidates = candidates }()
	for _, i := range plannable {
		r := &reqs[i]
		if reserved[r.part] {
			candidates = append(candidates, i)
			continue
		}
		if !p.mayStart(r, &out[i]) {
			continue
		}
		reached = i + 1
		if startNow(p, r, &out[i]) {
			p.started(r, &out[i])
			continue
		}
		planOne(p, r, 0, &out[i])
		p.started(r, &out[i])
		reserved[r.part] = out[i].start != never
	}
	wfp := b.Order == WFP || b.Order == RankedWFP
	if b.StartsOnly && wfp && b.Pack == 0 {
		startsOnlyByWFP(p, candidates, reqs, out, now, b.Order == RankedWFP, sc)
		return reached
	}
	order := append(sc.order[:0], candidates...)
	sc.order = order
	// With StartsOnly only candidates that fit now matter, and none fits
	// that needs more CPUs than any node keeps free for its run time
	// (widestNow): on a busy machine with a long queue most are left out
	// before the sort. (A full plan keeps them all: the reasons it reports
	// depend on the order in which group limits are checked.)
	var keep func(int) bool // nil: all
	if b.StartsOnly {
		widest := newWidestNow(p.nodes, sc.widest)
		sc.widest = widest
		keep = func(i int) bool { return widest.fits(&reqs[i]) }
	}
	if keep != nil && !wfp {
		order = slices.DeleteFunc(order, func(i int) bool { return !keep(i) })
	}
	switch b.Order {
	case ShortestFirst:
		sort.SliceStable(order, func(a, c int) bool { return reqs[order[a]].expect < reqs[order[c]].expect })
	case SmallestArea:
		sort.SliceStable(order, func(a, c int) bool { return reqs[order[a]].area() < reqs[order[c]].area() })
	case LargestSlowdown:
		sort.SliceStable(order, func(a, c int) bool { return reqs[order[a]].slowdown(now) > reqs[order[c]].slowdown(now) })
	case WFP, RankedWFP: // ranks count every candidate, so it leaves them out itself
		order = sortByWFP(order, reqs, now, b.Order == RankedWFP, keep)
	}
	if b.Pack > 0 {
		packStart(p, order, reqs, out, b.Pack, b.PackFill)
	}
	for _, i := range order {
		if !out[i].planned && p.mayStart(&reqs[i], &out[i]) && startNow(p, &reqs[i], &out[i]) {
			p.started(&reqs[i], &out[i])
			reached = max(reached, i+1)
		}
	}
	// Estimates for the jobs left waiting: where each would start if
	// nothing else jumped ahead of it. They are placed like conservative
	// reservations, after every decision above, so they change none.
	if b.StartsOnly {
		return reached
	}
	for _, i := range candidates {
		if !out[i].planned && out[i].reason == "" {
			planOne(p, &reqs[i], 0, &out[i])
		}
	}
	return reached
}

func planFCFS(p *profile, plannable []int, reqs []request, out []outcome, startsOnly bool) {
	blocked := make(map[*partState]bool)
	var waiting []int
	for _, i := range plannable {
		r := &reqs[i]
		if !blocked[r.part] {
			if !p.mayStart(r, &out[i]) {
				continue // like a blocked job: it holds nobody up
			}
			if startNow(p, r, &out[i]) {
				p.started(r, &out[i])
				continue
			}
			// A job that can never run on the up nodes holds nobody up.
			if t, _ := p.earliest(r, 0, never); t == never {
				out[i].planned = true
				continue
			}
			blocked[r.part] = true
		}
		waiting = append(waiting, i)
	}
	if startsOnly {
		return
	}
	// Estimates, after every start: in priority order, none earlier than
	// the job ahead in the same partition.
	notBefore := make(map[*partState]int64)
	for _, i := range waiting {
		r := &reqs[i]
		if !p.mayStart(r, &out[i]) {
			continue
		}
		from := notBefore[r.part]
		planOne(p, r, from, &out[i])
		if out[i].start != never {
			notBefore[r.part] = max(from, out[i].start)
		}
	}
}

// assemble turns outcomes into a Plan, naming reasons: Resources for the
// first job of each partition that does not start, Priority behind it.
func assemble(now time.Time, jobs []*Pending, out []outcome, startsOnly bool) Plan {
	var plan Plan
	waiting := make(map[string]bool)
	for i := range jobs {
		o := &out[i]
		if o.planned && o.start == 0 {
			plan.Starts = append(plan.Starts, Start{JobID: jobs[i].ID, Nodes: names(o.nodes), GPUs: o.gpus})
			continue
		}
		if startsOnly {
			continue
		}
		e := Estimate{JobID: jobs[i].ID, Reason: o.reason}
		if o.reason == "" {
			part := jobs[i].Partition
			if waiting[part] {
				e.Reason = api.ReasonPriority
			} else {
				e.Reason = api.ReasonResources
			}
			waiting[part] = true
		}
		if o.start != never {
			e.Start = now.Add(time.Duration(o.start))
			e.Nodes = names(o.nodes)
			e.GPUs = o.gpus
		}
		plan.Pending = append(plan.Pending, e)
	}
	return plan
}

// eligible is when the job's wait began.
func (r *request) eligible() time.Time {
	if r.Eligible.IsZero() {
		return r.Submit
	}
	return r.Eligible
}

// slowdown is (wait so far + planned run time) / planned run time, the
// planned run time counted as at least a minute so that the shortest
// jobs do not all tie at the top.
func (r *request) slowdown(now time.Time) float64 {
	d := float64(max(r.expect, int64(time.Minute)))
	return (float64(now.Sub(r.eligible())) + d) / d
}

// sortByWFP orders the candidates keep accepts (all if keep is nil;
// order is in priority order) by WFP, largest first, each weighed by its priority rank among
// all candidates when ranked: 2 for the first down to 1 for the last. It
// returns them in order's array. Scores are computed once, not per
// comparison.
func sortByWFP(order []int, reqs []request, now time.Time, ranked bool, keep func(int) bool) []int {
	type scored struct {
		i     int
		score float64
	}
	s := make([]scored, 0, len(order))
	for k, i := range order {
		if keep != nil && !keep(i) {
			continue
		}
		x := scored{i, reqs[i].wfp(now)}
		if ranked {
			x.score *= rankWeight(k, len(order))
		}
		s = append(s, x)
	}
	// Stable: ties keep priority order. Scores are finite.
	slices.SortStableFunc(s, func(a, c scored) int {
		switch {
		case a.score > c.score:
			return -1
		case a.score < c.score:
			return 1
		}
		return 0
	})
	order = order[:len(s)]
	for k := range s {
		order[k] = s[k].i
	}
	return order
}

// rankWeight weighs the k-th of n candidates' WFP score by its priority
// rank (RankedWFP): 2 for the first down to 1 for the last.
func rankWeight(k, n int) float64 {
	return 2 - float64(k)/float64(max(n-1, 1))
}

// wfp is (wait so far / planned run time)^3 x CPUs on all nodes, the
// run time counted as at least a minute.
func (r *request) wfp(now time.Time) float64 {
	x := float64(now.Sub(r.eligible())) / float64(max(r.expect, int64(time.Minute)))
	return x * x * x * float64(r.count) * float64(max(r.need.CPUs, 1))
}

// area is the expected run time times the CPUs on all nodes.
func (r *request) area() float64 {
	return float64(r.expect) * float64(r.count) * float64(max(r.need.CPUs, 1))
}

func names(nodes []*nodeState) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.name
	}
	return out
}
