package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/groups"
	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// Policy names a scheduling policy the simulator replays.
type Policy string

const (
	PolicyFCFS         Policy = "fcfs"
	PolicyEASY         Policy = "easy"
	PolicyConservative Policy = "conservative"
	// PolicySlurm is Slurm's backfill as a site runs it: SlurmConfig.
	PolicySlurm Policy = "slurm"
	// PolicyDefault is corral's own: see policyFor.
	PolicyDefault Policy = "default"
)

// Policies lists every policy in the order reports show them.
var Policies = []Policy{PolicyFCFS, PolicyEASY, PolicyConservative, PolicySlurm, PolicyDefault}

// ReferencePolicy is the replay unfair starts are measured against.
const ReferencePolicy = PolicyEASY

// ParsePolicy accepts a policy name in any case.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if strings.EqualFold(s, string(p)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown policy %q (valid: fcfs, easy, conservative, slurm, default)", s)
}

// setup is what a policy means for the replay.
type setup struct {
	planner  sched.Planner
	priority priority.Config
	// fairStarts, if set, gives each job its fair start (sched.FairStart)
	// up front, by job ID in seconds since the trace start, instead of
	// the planner's: the ablation tool's clairvoyant bound (its choice
	// oracle: the start EASY gave the job in a replay of the same trace).
	fairStarts map[int64]int64
	// predict tells the planner each job's expected run time, predicted
	// from its user's history (EASY++), to order backfill candidates by;
	// every job is still planned and killed at its requested time.
	predict bool
	// tick, when set, plans again every tick seconds of virtual time
	// while jobs wait, not only at arrivals and ends (Slurm's
	// bf_interval); prioPeriod, when set, recomputes priorities only at
	// its multiples (Slurm's PriorityCalcPeriod).
	tick, prioPeriod int64
	// limitUnit, when set, plans with requests rounded up to it (Slurm
	// keeps time limits in whole minutes), running jobs included.
	limitUnit int64
	// inOrder: the planner ranks jobs in submit order and, between
	// ticks, stops at the first that does not fit (fcfs, and slurm's main
	// scheduler with every priority weight 0), so a plan starts nothing
	// while the oldest job does not fit the free processors.
	inOrder bool
	// wholeQueue: every plan sees the whole queue, never a prefix
	// (prefixplan.go); what a prefix's plan must match.
	wholeQueue bool
}

// fcfsPriority orders jobs by submit time only: age is monotone in submit
// time, and ties (age capped) fall back to submit time in the planner.
func fcfsPriority() priority.Config {
	return priority.Config{Weights: priority.Weights{Age: 1_000_000}, MaxAge: 365 * 24 * time.Hour}
}

// defaultPriority is the controller's stock multifactor priority (Fair
// Tree fairshare 10000, age 1000, size 100 favouring large jobs, as the
// seed asks), so `--policy default` measures what a site gets out of the
// box. docs/benchmarks.md also gives the favour-small variant's numbers.
func defaultPriority() priority.Config {
	return priority.DefaultConfig()
}

// policyFor maps a policy to planner and priority settings. fcfs, easy and
// conservative use FCFS priority and user estimates, as published
// simulations do. The default policy is the controller's stock
// configuration (sched.DefaultBackfill and priority.DefaultConfig: EASY
// backfill whose reservations go to the two longest-waiting jobs once
// they have waited ten minutes, candidates in priority-ranked WFP order,
// multifactor priority) with one thing the
// controller lacks: run-time predictions (the mean of the user's last two
// run times, at most the request) order the backfill candidates whose
// request is a user estimate.
func policyFor(p Policy) (setup, error) {
	switch p {
	case PolicyFCFS:
		return setup{planner: sched.Backfill{Mode: sched.FCFS, StartsOnly: true}, priority: fcfsPriority(), inOrder: true}, nil
	case PolicyEASY:
		return setup{planner: sched.Backfill{Mode: sched.EASY, StartsOnly: true}, priority: fcfsPriority()}, nil
	case PolicyConservative:
		return setup{planner: sched.Backfill{Mode: sched.Conservative, StartsOnly: true}, priority: fcfsPriority()}, nil
	case PolicyDefault:
		return siteSetup(config.DefaultScheduling()), nil // a file without scheduling lines
	case PolicySlurm:
		return slurmSetup(DefaultSlurmConfig()), nil
	}
	return setup{}, fmt.Errorf("unknown policy %q (valid: fcfs, easy, conservative, slurm, default)", p)
}

// siteSetup is the default policy replayed with scheduling settings as
// the controller reads them from a corral.conf (config.DefaultScheduling
// for the stock ones), with run-time predictions. The share tree is left
// out: a trace's users are numbers, in no account of the file, so they
// share the default account equally.
func siteSetup(c config.Scheduling) setup {
	prio := c.Priority
	if c.Basic {
		prio = fcfsPriority()
	}
	prio.Accounts, prio.Users, prio.DefaultAccount = nil, nil, ""
	b := c.Planner
	b.StartsOnly = true
	return setup{planner: b, priority: prio, predict: true}
}

// Config is one replay.
type Config struct {
	Procs   int    // machine size; 0 = the trace header's MaxProcs
	Policy  Policy // "" = default
	MaxJobs int    // replay only the first MaxJobs jobs; 0 = all
	// Slurm configures PolicySlurm; nil means DefaultSlurmConfig.
	Slurm *SlurmConfig
	// Site, if set, is a site's own scheduling settings (its corral.conf,
	// ctld/config) for PolicyDefault in place of the stock ones, so that
	// a change can be tried on a trace before the controller runs it.
	Site *config.Scheduling
	// Reference is the ReferencePolicy replay of the same trace, for
	// Metrics.UnfairStarts; nil makes Run replay it.
	Reference []Record
}

// Record is what happened to one job.
type Record struct {
	ID        int64 `json:"id"`
	User      int64 `json:"user"`
	Procs     int   `json:"procs"`
	Submit    int64 `json:"submit"` // seconds since the trace start
	Start     int64 `json:"start"`
	End       int64 `json:"end"`
	Requested int64 `json:"requested"` // the limit it was killed at
	Killed    bool  `json:"killed"`    // ran into its limit
}

// Wait is how long the job queued.
func (r Record) Wait() int64 { return r.Start - r.Submit }

// Run is how long it ran.
func (r Record) Run() int64 { return r.End - r.Start }

// Result is a finished replay.
type Result struct {
	Policy  Policy `json:"policy"`
	Procs   int    `json:"procs"`
	Skipped int    `json:"skipped"` // trace lines that cannot be replayed
	// Cancelled counts records of jobs cancelled before they ran
	// (status 5, no run time): the archive keeps them, a replay drops them.
	Cancelled int `json:"cancelled"`
	// Partial counts lines of partial executions (status 2, 3 or 4: a
	// job checkpointed or swapped out and resumed) of jobs whose summary
	// line, with the same job number, the trace also has: the archive
	// gives both, and the replay runs the whole job once, from its
	// summary.
	Partial int      `json:"partial,omitempty"`
	Records []Record `json:"-"`
	Metrics Metrics  `json:"metrics"`
}

// epoch anchors virtual time; only differences matter.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s int64) time.Time { return epoch.Add(time.Duration(s) * time.Second) }

// simJob is a job during the replay.
type simJob struct {
	Record
	run    int64 // actual run time, clipped to the request
	expect int64 // predicted run time; 0 = none
	// estimated: the request is the user's estimate; without one (-1 in
	// the trace) it is the run time itself, which no prediction beats.
	estimated bool
	user      string
	userIdx   int       // the user's number, from 0 in order of first job
	submitted time.Time // Submit in virtual time
	pos       int       // index in the trace, the tie-breaker
	charge    int64     // usage is charged up to here
	groups    groups.Job
	grouped   bool  // groups.Limited: the job joins a limited group
	prio      int64 // priority at the last plan, when not age alone
	// fixed is the priority's fairshare and size parts under the
	// fairshare computation numbered fixedOf (replay.fsGen), which they
	// do not outlive; the age part is added at every plan.
	fixed   int64
	fixedOf int
	// agedOut: the age part has reached its full weight, which a longer
	// wait does not change, so no plan computes it again.
	agedOut bool
	// fair is the job's fair start as the planner computed it
	// (sched.FairStart); zero until then.
	fair time.Time
}

// prioJob is the job as the priority calculator sees it.
func (j *simJob) prioJob() priority.Job {
	return priority.Job{User: j.user, Eligible: j.submitted, Nodes: 1, CPUs: j.Procs}
}

// Run replays the trace in virtual time: no sleeping, no daemons. The
// machine is one node with Procs CPUs, so a job may use any free
// processors, as on the traced machines; each event (arrivals, ends) at a
// given second triggers one plan from the same priority and sched code the
// controller runs.
func Run(tr *Trace, cfg Config) (*Result, error) {
	if cfg.Policy == "" {
		cfg.Policy = PolicyDefault
	}
	pol, err := setupOf(cfg)
	if err != nil {
		return nil, err
	}
	// The reference replay runs beside this one: on a machine with two
	// cores it costs no wall time while it is the shorter.
	ref := cfg.Reference
	var refErr error
	refDone := make(chan struct{})
	if ref == nil && cfg.Policy != ReferencePolicy {
		go func() {
			defer close(refDone)
			refPol, _ := policyFor(ReferencePolicy)
			var refRes *Result
			refRes, refErr = runWith(tr, Config{Procs: cfg.Procs, Policy: ReferencePolicy, MaxJobs: cfg.MaxJobs}, refPol)
			if refErr == nil {
				ref = refRes.Records
			}
		}()
	} else {
		close(refDone)
	}
	res, err := runWith(tr, cfg, pol)
	<-refDone
	if err != nil {
		return nil, err
	}
	if refErr != nil {
		return nil, refErr
	}
	if ref != nil {
		res.Metrics.UnfairStarts = UnfairStarts(res.Records, ref)
	}
	res.Metrics.UnfairReference = ReferencePolicy
	return res, nil
}

// setupOf is cfg.Policy's setup, with cfg's Slurm or site settings.
func setupOf(cfg Config) (setup, error) {
	switch {
	case cfg.Policy == PolicySlurm && cfg.Slurm != nil:
		return slurmSetup(*cfg.Slurm), nil
	case cfg.Policy == PolicyDefault && cfg.Site != nil:
		return siteSetup(*cfg.Site), nil
	}
	return policyFor(cfg.Policy)
}

func runWith(tr *Trace, cfg Config, pol setup) (*Result, error) {
	procs := cfg.Procs
	if procs == 0 {
		procs = tr.MaxProcs()
	}
	if procs <= 0 {
		return nil, fmt.Errorf("the trace does not say how many processors the machine has; give --procs")
	}
	calc, err := priority.New(pol.priority)
	if err != nil {
		return nil, err
	}
	res := &Result{Policy: cfg.Policy, Procs: procs}
	jobs := admit(tr, cfg, procs, res)
	if pol.fairStarts != nil {
		for _, j := range jobs {
			if st, ok := pol.fairStarts[j.ID]; ok {
				j.fair = at(st)
			}
		}
	}
	r := &replay{pol: pol, calc: calc, procs: procs, ledger: calc.NewLedger(), fsGen: 1,
		history: map[string][]int64{}, index: make([]int, len(tr.Jobs)), allocs: map[int][]sched.Allocation{},
		fullAge: calc.AgePart(math.MaxInt64)}
	r.fixedJobs = !slices.ContainsFunc(jobs, func(j *simJob) bool { return j.grouped })
	if b, ok := pol.planner.(interface{ UsesFairStarts() bool }); ok && b.UsesFairStarts() {
		r.fixedJobs = false // plans give jobs fair starts
	}
	if err := r.run(jobs); err != nil {
		return nil, err
	}
	res.Records = r.done
	res.Metrics = Compute(res.Records, procs)
	return res, nil
}

// admit turns trace lines into jobs: allocated processors (else requested),
// requested time -1 means the run time (at least a second), runs clipped
// to the request.
// Lines with no processors, a negative run time or more processors than
// the machine are counted as skipped; partial executions of a job that
// has a summary line are left to it (Result.Partial).
func admit(tr *Trace, cfg Config, procs int, res *Result) []*simJob {
	var jobs []*simJob
	users := map[int64]int{}
	summarized := summaries(tr)
	for i, j := range tr.Jobs {
		if cfg.MaxJobs > 0 && len(jobs) >= cfg.MaxJobs {
			break
		}
		if j.Status == 5 && j.Run <= 0 {
			res.Cancelled++
			continue
		}
		if partialRun(j) && summarized[j.ID] {
			res.Partial++
			continue
		}
		p := j.Procs
		if p <= 0 {
			p = j.ReqProcs
		}
		req := j.ReqTime
		if req <= 0 {
			// Unknown: the run time stands for it. A run of 0 (under a
			// second) gets the second a plan can hold, not a skip:
			// logs without requests have thousands of them.
			req = max(j.Run, 1)
		}
		if p <= 0 || p > int64(procs) || j.Run < 0 || j.Submit < 0 || req <= 0 {
			res.Skipped++
			continue
		}
		sj := &simJob{Record: Record{ID: j.ID, User: j.User, Procs: int(p), Submit: j.Submit, Requested: req},
			run: min(j.Run, req), user: fmt.Sprint(j.User), submitted: at(j.Submit), pos: i}
		sj.Killed = j.Run > req
		if _, ok := users[j.User]; !ok {
			users[j.User] = len(users)
		}
		sj.userIdx = users[j.User]
		sj.groups = groups.Job{User: sj.user, Name: fmt.Sprint(j.Executable), Singleton: j.Singleton == 1}
		if j.Array > 0 {
			sj.groups.Array, sj.groups.MaxRunning = uint64(j.Array), int(max(j.ArrayMax, 0))
		}
		sj.grouped = sj.groups.Limited()
		sj.estimated = j.ReqTime > 0
		jobs = append(jobs, sj)
	}
	// Stable by submit time: traces are sorted, but do not rely on it.
	sortJobs(jobs)
	return jobs
}

// partialRun reports whether j is one run of a job that was checkpointed
// or swapped out (status 2: to be continued, 3: the last, completed, 4:
// the last, failed).
func partialRun(j Job) bool { return j.Status >= 2 && j.Status <= 4 }

// summaries is the job numbers that have a line of their own besides
// partial runs, nil when the trace has no partial runs. (Some logs use
// those status values for other things and have no repeated numbers: a
// line is left out only for a summary that is there.)
func summaries(tr *Trace) map[int64]bool {
	var has map[int64]bool
	for _, j := range tr.Jobs {
		if partialRun(j) {
			has = map[int64]bool{}
			break
		}
	}
	if has == nil {
		return nil
	}
	for _, j := range tr.Jobs {
		if !partialRun(j) {
			has[j.ID] = true
		}
	}
	return has
}

type replay struct {
	pol     setup
	calc    *priority.Calculator
	procs   int
	ledger  *priority.Ledger
	history map[string][]int64 // user -> last two run times, newest last

	pending []*simJob
	widths  widths // of pending
	prefix  prefixPlan
	running endHeap
	// byEnd holds the running jobs by planned end (Start+Requested),
	// then trace position: the snapshot lists them in that order, so the
	// planner's profile, rebuilt at every event from thousands of running
	// jobs on a large machine, finds its releases already sorted.
	byEnd []*simJob
	// held is the snapshot's list of running jobs, kept in byEnd's order
	// as jobs start and end rather than rebuilt for every plan;
	// runGroups: the last plan gave them group memberships.
	held      []sched.Running
	runGroups bool
	// allocs holds one allocation per job width, which every running job
	// of that width shares (the planner only reads them): a plan reads
	// thousands, and a few hundred small arrays stay in cache where one
	// per job would not.
	allocs map[int][]sched.Allocation
	busy   int // processors the running jobs hold
	done   []Record

	fs   priority.Fairshares // recomputed every calcPeriod, as Slurm does
	fsAt int64
	// fsNew: a job arrived whose user fs does not include, so the next
	// plan recomputes it at once.
	fsNew bool
	fsGen int // counts fairshare computations, from 1: see simJob.fixed
	// fullAge is the age part of a job that has waited the maximum age.
	fullAge int64
	// dirty: a job arrived or ended since the last tick's plan, so a
	// tick may start something (setup.tick).
	dirty bool
	last  int64 // the virtual time of the last plan
	// room is what the last conservative plan left free (sched.Headroom),
	// made at roomAt and kept until a job ends: pending[:roomed] are the
	// jobs it has answered for, the arrivals since are tested against it.
	room   *sched.Headroom
	roomAt int64
	roomed int

	// buffers reused from one plan to the next
	snap   sched.Snapshot
	pjobs  []priority.Job
	listed []int // by user number: the fsGen whose computation lists the user
	index  []int // trace position -> index in pending
	// queued: with fixedJobs under FCFS priority, snap.Pending is kept
	// from plan to plan and mirrors pending[:queued].
	queued    int
	fixedJobs bool // no job's snapshot entry changes while it waits
	startIdx  []int
}

// machineNode is the one node the replay's machine is.
const machineNode = "machine"

// calcPeriod is how often fairshare is recomputed (Slurm's
// PriorityCalcPeriod default), and sooner for a user it has not seen.
const calcPeriod = 300

func (r *replay) run(jobs []*simJob) error {
	next := 0
	for next < len(jobs) || len(r.running) > 0 {
		now := int64(-1)
		if next < len(jobs) {
			now = jobs[next].Submit
		}
		if len(r.running) > 0 && (now < 0 || r.running[0].End < now) {
			now = r.running[0].End
		}
		if t := r.nextTick(); t >= 0 && (now < 0 || t < now) {
			now = t
		}
		for len(r.running) > 0 && r.running[0].End == now {
			j := heap.Pop(&r.running).(*simJob)
			r.charge(j, now)
			i := r.endPos(j)
			r.byEnd = slices.Delete(r.byEnd, i, i+1)
			r.held = slices.Delete(r.held, i, i+1)
			r.busy -= j.Procs
			r.done = append(r.done, j.Record)
			h := append(r.history[j.user], j.run)
			if len(h) > 2 {
				h = h[1:]
			}
			r.history[j.user] = h
			r.dirty = true
			r.room = nil
		}
		for next < len(jobs) && jobs[next].Submit == now {
			j := jobs[next]
			j.expect = r.predicted(j)
			r.pending = append(r.pending, j)
			r.widths.add(j.Procs)
			r.prefix.add(j)
			if r.pol.priority.Weights.Fairshare > 0 && !r.fs.Has(j.user, "") {
				r.fsNew = true
			}
			next++
			r.dirty = true
		}
		r.schedule(now)
		if r.pol.tick > 0 && now%r.pol.tick == 0 {
			r.dirty = false
		}
		r.last = now
	}
	if len(r.pending) > 0 {
		return fmt.Errorf("%d jobs could never start (first: job %d)", len(r.pending), r.pending[0].ID)
	}
	return nil
}

// nextTick is the next tick at which a plan may start something, -1 for
// none: with nothing new since the last tick, only a change of priorities
// (every prioPeriod, when they move with time) can.
func (r *replay) nextTick() int64 {
	tick := r.pol.tick
	if tick <= 0 || len(r.pending) == 0 {
		return -1
	}
	t := (r.last/tick + 1) * tick
	if !r.dirty {
		w := r.pol.priority.Weights
		if w.Age == 0 && w.Fairshare == 0 || r.pol.prioPeriod <= 0 {
			return -1
		}
		q := (r.last/r.pol.prioPeriod + 1) * r.pol.prioPeriod
		t = (q + tick - 1) / tick * tick
	}
	return t
}

// predicted is a job's expected run time with predictions: the mean of
// its user's last two run times, at least a second, at most the request;
// 0 without predictions, history or an estimate to improve on.
func (r *replay) predicted(j *simJob) int64 {
	h := r.history[j.user]
	if u := r.pol.limitUnit; u > 0 {
		return (j.Requested + u - 1) / u * u
	}
	if !r.pol.predict || !j.estimated || len(h) == 0 {
		return 0
	}
	sum := int64(0)
	for _, x := range h {
		sum += x
	}
	return max(1, min(j.Requested, sum/int64(len(h))))
}

// charge charges a job's usage since its last charge up to now. Only a
// fairshare computation reads usage, so running jobs are charged just
// before one and at their end, not at every event: charging hundreds of
// running jobs at each of hundreds of thousands of events was a third of
// a replay.
func (r *replay) charge(j *simJob, now int64) {
	if r.pol.priority.Weights.Fairshare == 0 || now <= j.charge {
		return // usage would change nothing
	}
	r.ledger.Charge(j.user, "", r.calc.Billing(priority.Alloc{CPUs: j.Procs}), at(j.charge), at(now))
	j.charge = now
}

// schedule builds a snapshot, plans, and starts what the plan starts.
func (r *replay) schedule(now int64) {
	if len(r.pending) == 0 || r.headWaits(now) {
		return
	}
	s := &r.snap
	if s.Nodes == nil {
		s.Nodes = []sched.Node{{Name: machineNode, Capacity: sched.Resources{CPUs: r.procs}, Up: true}}
		s.Partitions = []sched.Partition{{Name: "batch", Nodes: []string{machineNode}}}
	}
	w := r.pol.priority.Weights
	// Age alone orders jobs as their submit times do, which the planner
	// falls back to on equal priorities: computing it decides nothing.
	byAge := w.Fairshare == 0 && w.Size == 0
	if w.Fairshare > 0 && (r.fsNew || now-r.fsAt >= calcPeriod) {
		for _, j := range r.byEnd {
			r.charge(j, now)
		}
		// The computation includes every pending job's user, once.
		r.pjobs = r.pjobs[:0]
		for _, j := range r.pending {
			if j.userIdx >= len(r.listed) {
				r.listed = append(r.listed, make([]int, j.userIdx+1-len(r.listed))...)
			}
			if r.listed[j.userIdx] != r.fsGen {
				r.listed[j.userIdx] = r.fsGen
				r.pjobs = append(r.pjobs, j.prioJob())
			}
		}
		r.fs, r.fsAt, r.fsNew = r.calc.Fairshares(r.ledger, at(now), r.pjobs), now, false
		r.fsGen++
	}
	if r.widths.narrowest() > r.procs-r.busy && !r.needsFairStarts() {
		return // no plan can start a job that does not fit the free processors
	}
	if r.arrivalsCannotStart(now) {
		return
	}
	s.Now, s.Running = at(now), r.held
	cluster := priority.Cluster{Nodes: 1, CPUs: r.procs}
	prioSec := now
	if p := r.pol.prioPeriod; p > 0 {
		prioSec = now / p * p // as of the last recalculation
	}
	if !byAge {
		for _, j := range r.pending {
			if j.fixedOf != r.fsGen { // shares recomputed since: parts change
				j.fixed, j.fixedOf = r.calc.FixedPart(j.prioJob(), r.fs, cluster), r.fsGen
			}
			age := r.fullAge
			if !j.agedOut {
				age = r.calc.AgePart(time.Duration(prioSec-j.Submit) * time.Second)
				j.agedOut = age == r.fullAge
			}
			j.prio = j.fixed + age
		}
		orderPending(r.pending)
	}
	var g groups.Builder // the controller's %N and singleton limits
	kept := byAge && r.fixedJobs
	if !kept {
		r.queued, s.Pending = 0, s.Pending[:0]
	}
	for i, j := range r.pending[r.queued:] {
		i += r.queued
		if !kept {
			r.index[j.pos] = i
		}
		s.Pending = append(s.Pending, sched.Pending{
			ID: uint64(j.pos), Partition: "batch", NodeCount: 1,
			PerNode:   sched.Resources{CPUs: j.Procs},
			TimeLimit: time.Duration(j.Requested) * time.Second,
			Expected:  time.Duration(j.expect) * time.Second,
			Submit:    j.submitted,
			FairStart: j.fair,
		})
		if !byAge {
			s.Pending[i].Priority = j.prio
		}
		if j.grouped {
			s.Pending[i].Groups = g.Pending(j.groups)
		}
	}
	if kept {
		r.queued = len(r.pending)
	}
	if s.GroupLimits = g.Limits(); s.GroupLimits != nil || r.runGroups {
		r.runGroups = s.GroupLimits != nil
		for i, j := range r.byEnd {
			s.Running[i].Groups = nil
			if r.runGroups {
				s.Running[i].Groups = g.Running(j.groups)
			}
		}
	}
	plan := r.plan(s, byAge && s.GroupLimits == nil)
	for _, f := range plan.FairStarts {
		r.pending[r.index[f.JobID]].fair = f.At
	}
	// The room answers for arrivals only where they queue behind every
	// job it was made over: in submit order, with no group limit to pass
	// a job over.
	r.room, r.roomAt = nil, now
	if byAge && s.GroupLimits == nil {
		r.room = plan.Headroom
	}
	if len(plan.Starts) == 0 {
		r.roomed = len(r.pending)
		return
	}
	idx := r.startIndexes(plan.Starts, kept)
	for _, i := range idx {
		j := r.pending[i]
		j.Start, j.End, j.charge = now, now+j.run, now
		heap.Push(&r.running, j)
		k := r.endPos(j)
		r.byEnd = slices.Insert(r.byEnd, k, j)
		r.held = slices.Insert(r.held, k, sched.Running{ID: uint64(j.pos), End: at(j.Start + j.Requested), Alloc: r.allocation(j.Procs)})
		r.busy += j.Procs
		r.widths.remove(j.Procs)
	}
	r.pending = dropAt(r.pending, idx)
	r.prefix.dropped(idx)
	if kept {
		s.Pending = dropAt(s.Pending, idx)
		r.queued = len(r.pending)
	}
	r.roomed = len(r.pending)
}

// headWaits reports whether an in-order plan now, not at a tick, would
// start nothing because the oldest job does not fit the free processors.
// In-order policies rank by age alone, so pending jobs stay by submit
// time then trace position (orderPending reorders only multifactor
// queues), the planners' order for equal priorities; a job under a group
// limit may be passed over, so then the plan decides. On an overloaded
// log this spares a plan of thousands of jobs at almost every event.
func (r *replay) headWaits(now int64) bool {
	if !r.pol.inOrder || r.pol.tick > 0 && now%r.pol.tick == 0 {
		return false
	}
	h := r.pending[0]
	return h.Procs > r.procs-r.busy && !h.grouped
}

// allocation is what a job of procs processors holds.
func (r *replay) allocation(procs int) []sched.Allocation {
	a, ok := r.allocs[procs]
	if !ok {
		a = []sched.Allocation{{Node: machineNode, Resources: sched.Resources{CPUs: procs}}}
		r.allocs[procs] = a
	}
	return a
}

// endPos is where j is or belongs in byEnd.
func (r *replay) endPos(j *simJob) int {
	i, _ := slices.BinarySearchFunc(r.byEnd, j, func(a, b *simJob) int {
		return cmp.Or(cmp.Compare(a.Start+a.Requested, b.Start+b.Requested), cmp.Compare(a.pos, b.pos))
	})
	return i
}

// needsFairStarts reports whether the planner computes fair starts and a
// pending job has none yet: it gets one in the plan that first sees it,
// even when nothing can start then.
func (r *replay) needsFairStarts() bool {
	if b, ok := r.pol.planner.(interface{ UsesFairStarts() bool }); !ok || !b.UsesFairStarts() {
		return false
	}
	for _, j := range r.pending {
		if j.fair.IsZero() {
			return true
		}
	}
	return false
}

// endHeap orders running jobs by end, then trace position.
type endHeap []*simJob

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(a, b int) bool {
	if h[a].End != h[b].End {
		return h[a].End < h[b].End
	}
	return h[a].pos < h[b].pos
}
func (h endHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(*simJob)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
