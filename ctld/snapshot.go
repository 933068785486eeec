package ctld

import (
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/groups"
	"github.com/corral-hpc/corral/policy"
	"github.com/corral-hpc/corral/sched"
)

// The planner's input is built in one place, the same for a scheduling
// cycle and a test-only submit, so both decide alike. Building it changes
// nothing: what it learns for the cycle (cycleNotes) comes back as a
// value, and charging the fairshare ledger is the cycle's own step before
// it. The limits the planner enforces (an array's %N, singleton
// dependencies, policy running limits) go to it as group limits.

// cycleNotes is what building a snapshot learns for the apply step.
type cycleNotes struct {
	// first maps an array's first candidate task ID to its array: that
	// task's estimate becomes the remainder's reason.
	first map[uint64]*arrayJob
	// kills are jobs whose dependency can never be satisfied and that are
	// to be cancelled.
	kills []killOrder
	// wake is the earliest future eligibility seen (Unix nanoseconds).
	wake int64
	// runningNames counts running jobs by user and name (singleton),
	// built on first use.
	runningNames map[string]int
}

// wakeAtLeast notes that a blocked job becomes eligible at t. A nil n
// (a dependency checked outside a snapshot) notes nothing.
func (n *cycleNotes) wakeAtLeast(t time.Time) {
	if n == nil {
		return
	}
	if w := t.UnixNano(); n.wake == 0 || w < n.wake {
		n.wake = w
	}
}

// applyToArrays gives each array remainder its first candidate's
// priority, reason and planned start, the apply step's part for arrays
// (the caller holds Server.mu for writing).
func (n *cycleNotes) applyToArrays(snap sched.Snapshot, plan sched.Plan) {
	if len(n.first) == 0 {
		return
	}
	for _, p := range snap.Pending {
		if r := n.first[p.ID].remJob(); r != nil {
			r.Priority = p.Priority
			r.Reason, r.PlannedStart, r.PlannedNodes = api.ReasonNone, nil, nil
		}
	}
	for _, e := range plan.Pending {
		if r := n.first[e.JobID].remJob(); r != nil {
			r.Reason = e.Reason
			if !e.Start.IsZero() {
				at := e.Start
				r.PlannedStart, r.PlannedNodes = &at, append([]string(nil), e.Nodes...)
			}
		}
	}
}

// snapshotBuilder builds the planner's input from the queue, the nodes,
// the partitions and the policies. Its buffers are reused from cycle to
// cycle, so one snapshot is built at a time: callers hold Server.cycleMu,
// and Server.mu (read at least) for what it reads.
type snapshotBuilder struct {
	q        *queue
	nodes    *nodeRegistry
	parts    partitions
	policies *policy.Set
	fs       *fairshare.State
	pipeline *PipelineConfig // the default of --kill-on-invalid-dep
	// jobBuf and pendingBuf are the reused buffers: a long queue would
	// otherwise allocate megabytes per cycle.
	jobBuf     []*api.Job
	pendingBuf []sched.Pending
	// nodeNames are the snapshot's nodes, which -x leaves a job.
	nodeNames []string
}

// prepare charges running jobs to the usage ledger up to now and fixes
// the fairshares every priority of the snapshot at now uses. It is the
// one step of a cycle that changes state before the plan, taken before
// build.
func (b *snapshotBuilder) prepare(now time.Time) { b.fs.Prepare(now, b.view()) }

// pendingOf is the planner's entry for a pending job under id: its
// request, priority (nice applied), when its wait began, the nodes it
// may use and what keeps it from starting (blocked, "" if nothing). Every sched.Pending comes
// from here; build sets the node names first.
func (b *snapshotBuilder) pendingOf(job *api.Job, id uint64, prio int64, blocked api.Reason, now time.Time) sched.Pending {
	p := sched.Pending{ID: id, Partition: job.Partition, NodeCount: job.NodeCount,
		PerNode: askedPerNode(job), Sharing: sharingOf(&job.Spec), TimeLimit: time.Duration(job.TimeLimit) * time.Second,
		Priority: prio - int64(job.Spec.Nice), Submit: job.SubmitTime, Blocked: blocked,
		Eligible: b.fs.Eligible(job, now),
		Allowed:  b.nodes.holdingMemPerCPU(&job.Spec, allowedNodes(&job.Spec, b.nodeNames, b.parts.features), b.nodeNames)}
	gpuPending(job, &p) // the planner adds whole GPUs at each node's worth
	return p
}

// blockedOf is why a pending job may not be planned at all: its
// partition is gone, or a hold, begin time or dependency (noting kills
// and wake times in notes). task is its array index, nil outside arrays.
func (b *snapshotBuilder) blockedOf(job *api.Job, task *int, now time.Time, notes *cycleNotes) api.Reason {
	if _, ok := b.parts.byName[job.Partition]; !ok {
		return reasonPartitionDown
	}
	r := b.q.blocked(job, task, now, notes)
	if r == api.ReasonDependencyNeverSatisfied && notes != nil && b.pipeline.killOnInvalidDep(job) {
		notes.kills = append(notes.kills, killOrder{id: job.ID})
	}
	return r
}

// build builds the planner's input; test, if set, is a job to plan as if
// it were queued now (ID testOnlyID). Pending jobs are listed in ID
// (submit) order, which planners that order by priority then submit time
// sort cheaply. The caller holds Server.mu (read) and cycleMu, and has
// called prepare at now.
func (b *snapshotBuilder) build(now time.Time, test *api.Job) (sched.Snapshot, cycleNotes) {
	var notes cycleNotes
	// Wall clock only: start times are stored without a monotonic reading,
	// and planned starts must come out as exact wall times of them.
	snap := sched.Snapshot{Now: now.Round(0)}
	snap.Nodes = b.nodes.schedNodes(b.parts)
	b.nodeNames = b.nodeNames[:0]
	for _, n := range snap.Nodes {
		b.nodeNames = append(b.nodeNames, n.Name)
	}
	for _, p := range b.parts.list {
		sp := sched.Partition{Name: p.Name, DefaultTime: time.Duration(p.DefaultTime) * time.Second,
			MaxTime: time.Duration(p.MaxTime) * time.Second}
		for _, n := range sortNodes(b.nodes.inPartition(b.parts, p.Name)) {
			sp.Nodes = append(sp.Nodes, n.name())
		}
		snap.Partitions = append(snap.Partitions, sp)
	}
	// The ID and Pending buffers are reused from cycle to cycle (planners
	// keep nothing between calls).
	var pending []*api.Job
	snap.Running, pending = b.q.runningAndPending(b.jobBuf[:0])
	clear(pending[len(pending):cap(pending)]) // keep no ended job alive
	b.jobBuf = pending
	snap.Pending = slices.Grow(b.pendingBuf[:0], len(pending))[:len(pending)]
	g := b.groups()
	for i, job := range pending {
		id := job.ID
		snap.Pending[i] = b.pendingOf(job, id, b.priority(job, now), b.blockedOf(job, job.ArrayTaskID, now, &notes), now)
		snap.Pending[i].Groups = g.pendingMembers(job, b.q.array(job.ArrayJobID))
	}
	snap.Pending = b.appendArrayTasks(snap.Pending, now, g, &notes)
	if test != nil {
		p := b.pendingOf(test, testOnlyID, b.priority(test, now), b.blockedOf(test, nil, now, nil), now)
		p.Submit = now
		p.Groups = g.pendingMembers(test, nil)
		snap.Pending = append(snap.Pending, p)
	}
	b.pendingBuf = snap.Pending
	g.addRunning(snap.Running, b.q)
	snap.GroupLimits = g.Limits()
	return snap, notes
}

// groupBuilder describes one snapshot's jobs to package groups.
type groupBuilder struct {
	groups.Builder
	policies *policy.Set // nil without policies: no policy groups
	q        *queue
}

// groups starts a snapshot's groups.
func (b *snapshotBuilder) groups() *groupBuilder {
	g := &groupBuilder{q: b.q}
	if !b.policies.Empty() {
		g.policies = b.policies
	}
	return g
}

// describe is what decides job's groups; a is its array, if any.
func (g *groupBuilder) describe(job *api.Job, a *arrayJob) groups.Job {
	d := groups.Job{User: job.User, Name: job.Name, Singleton: isSingleton(job.Spec.Dependency), Account: job.Spec.Account}
	if a != nil {
		d.Array, d.MaxRunning = a.id(), a.limit()
	}
	if g.policies != nil {
		d.UserLimits, d.AccountLimits = g.policies.Limits(job.User, job.Spec.Account)
		d.Use = jobRequest(job)
	}
	return d
}

// pendingMembers are the groups a pending job joins when it starts.
func (g *groupBuilder) pendingMembers(job *api.Job, a *arrayJob) []sched.Member {
	return g.Pending(g.describe(job, a))
}

// addRunning counts the running jobs in the groups the pending ones are
// limited by.
func (g *groupBuilder) addRunning(running []sched.Running, q *queue) {
	if g.Limits() == nil {
		return
	}
	for i := range running {
		job := q.unfinishedRecord(running[i].ID)
		if job == nil { // a finished job's parts still stopping count in no group
			continue
		}
		running[i].Groups = g.Running(g.describe(job, q.array(job.ArrayJobID)))
	}
}

// appendArrayTasks adds array tasks to the planner's pending jobs
// (end of the snapshot). A remainder offers only as many tasks as the free
// CPUs of its partition could start now, plus one for its estimate, and no
// more than its %N limit leaves room for: a 10,000-task array costs the
// planner what a few jobs do. The cap is an upper bound on what could
// start, never the limit itself: the tasks are members of the array's
// group, which the planner enforces. A remainder with no room or blocked
// offers one task, carrying the reason. The first task offered stands for
// the remainder in apply.
func (b *snapshotBuilder) appendArrayTasks(pending []sched.Pending, now time.Time, g *groupBuilder, notes *cycleNotes) []sched.Pending {
	if !b.q.hasArrays() {
		return pending
	}
	notes.first = make(map[uint64]*arrayJob)
	running := b.q.runningPerArray()
	free := b.nodes.freeCPUs(b.q.allocation())
	for a := range b.q.arraysInOrder() {
		job := a.pendingRem()
		if job == nil || a.remaining() == 0 {
			continue
		}
		prio, eligible := b.priority(job, now), b.fs.Eligible(job, now) // the remainder's, as its tasks'
		n := min(a.remaining(), 1+free[job.Partition]/max(job.CPUs, 1))
		if a.limit() > 0 {
			n = min(n, a.limit()-running[a.id()])
		}
		offered := 0
		for _, index := range a.firstPending(max(n, 1)) {
			id, _ := a.idOf(index)
			view := taskView(a, index)
			p := b.pendingOf(&view, id, prio, b.blockedOf(&view, &index, now, notes), now)
			p.Eligible = eligible
			if p.Blocked == api.ReasonDependencyNeverSatisfied && offered == 0 && !hasAfterCorr(job.Spec.Dependency) {
				// The whole remainder can never run: kill (or show) it once.
				notes.kills = slices.DeleteFunc(notes.kills, func(k killOrder) bool { return k.id == p.ID })
				if b.pipeline.killOnInvalidDep(job) {
					notes.kills = append(notes.kills, killOrder{id: p.ID, array: a})
				}
			}
			if p.Blocked != "" && offered > 0 {
				continue // only the first task speaks for a blocked remainder
			}
			if offered == 0 {
				notes.first[p.ID] = a
			}
			p.Groups = g.pendingMembers(&view, a)
			pending = append(pending, p)
			offered++
			if p.Blocked != "" && !hasAfterCorr(job.Spec.Dependency) {
				break // every task is blocked alike
			}
		}
	}
	return pending
}

// runningNamesOr is the running jobs by user and name counted once per
// snapshot: count's answer, kept in the notes when there are any.
func (n *cycleNotes) runningNamesOr(count func() map[string]int) map[string]int {
	if n == nil {
		return count()
	}
	if n.runningNames == nil {
		n.runningNames = count()
	}
	return n.runningNames
}

func newSnapshotBuilder(q *queue, nodes *nodeRegistry, parts partitions, policies *policy.Set, fs *fairshare.State, pipeline *PipelineConfig) *snapshotBuilder {
	return &snapshotBuilder{q: q, nodes: nodes, parts: parts, policies: policies, fs: fs, pipeline: pipeline}
}

// nextWake is the earliest future eligibility the snapshot saw (Unix
// nanoseconds, 0: none).
func (n *cycleNotes) nextWake() int64 { return n.wake }

// invalidDeps are the jobs whose dependency can never be satisfied and
// that are to be killed.
func (n *cycleNotes) invalidDeps() []killOrder { return n.kills }
