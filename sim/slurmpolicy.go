package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// SlurmConfig is what PolicySlurm replays: Slurm's two schedulers as
// slurmctld runs them. The main scheduler (sched/builtin's loop, run at
// every arrival and end) starts jobs in priority order and stops at the
// first that does not fit; the backfill scheduler runs every Interval
// seconds of virtual time, tests up to MaxJobTest jobs in priority order,
// starts each that fits now without delaying an earlier reservation, and
// reserves for each tested job that would start within Window.
type SlurmConfig struct {
	// Priority is the multifactor configuration; its zero weights (Slurm
	// 22.05's defaults, also what priority/basic amounts to) order jobs
	// by submit time.
	Priority priority.Config
	// CalcPeriod is PriorityCalcPeriod: priorities change only at its
	// multiples (a new job gets its priority when submitted).
	CalcPeriod time.Duration
	// Backfill is false for SchedulerType=sched/builtin.
	Backfill   bool
	Window     time.Duration // bf_window
	MaxJobTest int           // bf_max_job_test
	Resolution time.Duration // bf_resolution
	Interval   time.Duration // bf_interval
	QueueDepth int           // default_queue_depth: the main scheduler's
}

// DefaultSlurmConfig is Slurm 22.05's documented defaults (slurm.conf(5)):
// every PriorityWeight* 0, PriorityMaxAge and PriorityDecayHalfLife 7
// days, PriorityCalcPeriod 5 minutes, sched/backfill with bf_window 1
// day, bf_max_job_test 500, bf_resolution 60 s, bf_interval 30 s,
// bf_continue off, default_queue_depth 100.
func DefaultSlurmConfig() SlurmConfig {
	return SlurmConfig{
		Priority: priority.Config{Algorithm: priority.FairTree, MaxAge: 7 * 24 * time.Hour,
			Decay: priority.DefaultDecay(), Billing: priority.DefaultBillingWeights()},
		CalcPeriod: 5 * time.Minute, Backfill: true, Window: 24 * time.Hour, MaxJobTest: 500,
		Resolution: time.Minute, Interval: 30 * time.Second, QueueDepth: 100,
	}
}

// slurmSetup is the replay of c. The replay plans at every arrival and
// end (the main scheduler) and at every bf_interval tick while jobs wait
// (the backfill scheduler); slurmPlanner tells the two apart by the time.
func slurmSetup(c SlurmConfig) setup {
	secs := func(d time.Duration) int64 { return max(1, int64(d/time.Second)) }
	s := setup{planner: slurmPlanner{c}, priority: c.Priority, prioPeriod: secs(c.CalcPeriod), limitUnit: 60}
	if c.Backfill {
		s.tick = secs(c.Interval)
	}
	// With every weight 0 (priority/basic) all priorities are equal and
	// jobs go by submit time, and the main scheduler, which alone runs
	// between ticks, stops at the first job that does not fit.
	s.inOrder = c.Priority.Weights == (priority.Weights{})
	return s
}

// slurmPlanner plans the simulator's one-node machine as Slurm would a
// machine of single-processor nodes: CPUs are counted, not placed, and a
// reservation holds the CPUs it needs, as backfill's node map holds nodes.
type slurmPlanner struct{ c SlurmConfig }

// Plan implements sched.Planner: the main scheduler at every call, then,
// at bf_interval ticks, the backfill scheduler on what is left.
func (p slurmPlanner) Plan(s sched.Snapshot) sched.Plan {
	now := int64(s.Now.Sub(epoch) / time.Second)
	capacity := 0
	for _, n := range s.Nodes {
		capacity += n.Capacity.CPUs
	}
	prof := newCPUProfile(now, capacity, s.Running)
	jobs := make([]*sched.Pending, len(s.Pending))
	for i := range s.Pending {
		jobs[i] = &s.Pending[i]
	}
	slices.SortStableFunc(jobs, func(a, b *sched.Pending) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		if c := a.Submit.Compare(b.Submit); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	lim := newGroupCount(&s)
	var plan sched.Plan
	started := make(map[uint64]bool)
	start := func(j *sched.Pending, dur int64) {
		prof.hold(now, now+dur, j.PerNode.CPUs)
		lim.join(j)
		started[j.ID] = true
		plan.Starts = append(plan.Starts, sched.Start{JobID: j.ID, Nodes: []string{s.Nodes[0].Name}})
	}
	// The main scheduler: priority order, stopping at the first job that
	// does not fit now; a job held by a limit is passed over.
	for i, j := range jobs {
		if i >= p.c.QueueDepth {
			break
		}
		if !lim.mayJoin(j) {
			continue
		}
		dur := limitSecs(j)
		if prof.earliest(now, dur, j.PerNode.CPUs) != now {
			break
		}
		start(j, dur)
	}
	if !p.c.Backfill || now%max(1, int64(p.c.Interval/time.Second)) != 0 {
		return plan
	}
	res := max(1, int64(p.c.Resolution/time.Second))
	window := now + int64(p.c.Window/time.Second)
	tested := 0
	for _, j := range jobs {
		if started[j.ID] || !lim.mayJoin(j) {
			continue
		}
		if tested >= p.c.MaxJobTest {
			break
		}
		tested++
		dur := limitSecs(j)
		t := prof.earliest(now, dur, j.PerNode.CPUs)
		switch {
		case t == now:
			start(j, dur)
		case t <= window:
			// Reservations are kept at bf_resolution: start and end
			// rounded down, as backfill's node map does.
			prof.hold(t/res*res, (t+dur)/res*res, j.PerNode.CPUs)
		}
	}
	return plan
}

// limitSecs is the job's time limit: whole minutes, as Slurm keeps them
// (setup.limitUnit), for running jobs' ends too.
func limitSecs(j *sched.Pending) int64 { return max(1, int64(j.TimeLimit/time.Second)) }

// cpuProfile is the free CPUs over time from now: free[i] holds from
// at[i] until at[i+1] (the last until forever).
type cpuProfile struct {
	at   []int64
	free []int
}

// newCPUProfile is the machine's profile with the running jobs holding
// their CPUs until their planned ends.
func newCPUProfile(now int64, capacity int, running []sched.Running) *cpuProfile {
	type end struct {
		at   int64
		cpus int
	}
	ends := make([]end, 0, len(running))
	free := capacity
	for _, r := range running {
		cpus := 0
		for _, a := range r.Alloc {
			cpus += a.Resources.CPUs
		}
		free -= cpus
		ends = append(ends, end{max(now, int64(r.End.Sub(epoch)/time.Second)), cpus})
	}
	byTime := func(a, b end) int { return cmp.Compare(a.at, b.at) }
	if !slices.IsSortedFunc(ends, byTime) { // the replay lists them by end
		slices.SortFunc(ends, byTime)
	}
	p := &cpuProfile{at: []int64{now}, free: []int{free}}
	for _, e := range ends {
		if last := len(p.at) - 1; p.at[last] == e.at {
			p.free[last] += e.cpus
			continue
		}
		p.at = append(p.at, e.at)
		p.free = append(p.free, p.free[len(p.free)-1]+e.cpus)
	}
	return p
}

// split makes t a boundary and returns its index (t >= at[0]).
func (p *cpuProfile) split(t int64) int {
	i, found := slices.BinarySearch(p.at, t)
	if found {
		return i
	}
	p.at = slices.Insert(p.at, i, t)
	p.free = slices.Insert(p.free, i, p.free[i-1])
	return i
}

// hold takes cpus from from until to. A reservation rounded down to
// bf_resolution may reach back over CPUs that free up only later in the
// same step; free never goes below zero for it.
func (p *cpuProfile) hold(from, to int64, cpus int) {
	from = max(from, p.at[0])
	if to <= from || cpus <= 0 {
		return
	}
	a, b := p.split(from), p.split(to)
	for i := a; i < b; i++ {
		p.free[i] = max(0, p.free[i]-cpus)
	}
}

// earliest is the first time at or after from when cpus are free for dur
// seconds; free CPUs only ever rise after the last step, so it exists if
// cpus fit the machine at all (the replay admits no wider job).
func (p *cpuProfile) earliest(from, dur int64, cpus int) int64 {
	i, found := slices.BinarySearch(p.at, from)
	if !found {
		i--
	}
	for i < len(p.at) {
		if p.free[i] < cpus {
			i++
			continue
		}
		t := max(from, p.at[i])
		k := i + 1
		for k < len(p.at) && p.at[k] < t+dur && p.free[k] >= cpus {
			k++
		}
		if k == len(p.at) || p.at[k] >= t+dur {
			return t
		}
		i = k + 1 // the step at k is too small: start after it
	}
	return never
}

// never is a time no job starts at.
const never = int64(1<<63 - 1)

// groupCount is the group limits (an array's %N, singletons) as the
// Slurm planner applies them: a job that would pass one is passed over.
type groupCount struct {
	limits map[string]sched.GroupLimit
	used   map[string]int64
}

func newGroupCount(s *sched.Snapshot) groupCount {
	g := groupCount{limits: s.GroupLimits, used: map[string]int64{}}
	for _, r := range s.Running {
		for _, m := range r.Groups {
			g.used[m.Group] += m.Use
		}
	}
	return g
}

func (g groupCount) mayJoin(j *sched.Pending) bool {
	for _, m := range j.Groups {
		if l, ok := g.limits[m.Group]; ok && g.used[m.Group]+m.Use > l.Max {
			return false
		}
	}
	return true
}

func (g groupCount) join(j *sched.Pending) {
	for _, m := range j.Groups {
		g.used[m.Group] += m.Use
	}
}
