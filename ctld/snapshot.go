package ctld

import (
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
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

// chargeFairshareLocked charges running jobs to the usage ledger up to
// now and fixes the fairshares every priority of the snapshot at now
// uses. It is the one step of a cycle that changes state before the plan.
func (s *Server) chargeFairshareLocked(now time.Time) { s.fs.Prepare(now, cycleView{s}) }

// pendingOf is the planner's entry for a pending job under id: its
// request, priority (nice applied) and what keeps it from starting
// (blocked, "" if nothing). Every sched.Pending comes from here.
func pendingOf(job *api.Job, id uint64, prio int64, blocked api.Reason) sched.Pending {
	p := sched.Pending{ID: id, Partition: job.Partition, NodeCount: job.NodeCount,
		PerNode: perNode(job), TimeLimit: time.Duration(job.TimeLimit) * time.Second,
		Priority: prio - int64(job.Spec.Nice), Submit: job.SubmitTime, Blocked: blocked}
	gpuPending(job, &p) // the planner adds whole GPUs at each node's worth
	return p
}

// blockedOfLocked is why a pending job may not be planned at all: its
// partition is gone, or a hold, begin time or dependency (noting kills
// and wake times in notes). task is its array index, nil outside arrays.
func (s *Server) blockedOfLocked(job *api.Job, task *int, now time.Time, notes *cycleNotes) api.Reason {
	if _, ok := s.parts.byName[job.Partition]; !ok {
		return reasonPartitionDown
	}
	r := s.blockedLocked(job, task, now, notes)
	if r == api.ReasonDependencyNeverSatisfied && notes != nil && s.killOnInvalidDep(job) {
		notes.kills = append(notes.kills, killOrder{id: job.ID})
	}
	return r
}

// snapshotLocked builds the planner's input; test, if set, is a job to
// plan as if it were queued now (ID testOnlyID). Pending jobs are listed
// in ID (submit) order, which planners that order by priority then submit
// time sort cheaply. The caller holds s.mu (read) and cycleMu, and has
// charged fairshare up to now.
func (s *Server) snapshotLocked(now time.Time, test *api.Job) (sched.Snapshot, cycleNotes) {
	var notes cycleNotes
	// Wall clock only: start times are stored without a monotonic reading,
	// and planned starts must come out as exact wall times of them.
	snap := sched.Snapshot{Now: now.Round(0)}
	for name, n := range s.nodes.all() {
		snap.Nodes = append(snap.Nodes, sched.Node{Name: name,
			Capacity: sched.Resources{CPUs: n.rec.CPUs, MemBytes: n.rec.MemBytes}, Up: n.up && n.rec.Drain == ""})
		n.addGPUsTo(&snap.Nodes[len(snap.Nodes)-1], s.parts)
	}
	for _, p := range s.parts.list {
		sp := sched.Partition{Name: p.Name, DefaultTime: time.Duration(p.DefaultTime) * time.Second,
			MaxTime: time.Duration(p.MaxTime) * time.Second}
		for _, n := range sortNodes(s.nodes.inPartition(s.parts, p.Name)) {
			sp.Nodes = append(sp.Nodes, n.rec.Name)
		}
		snap.Partitions = append(snap.Partitions, sp)
	}
	// The ID and Pending buffers are reused from cycle to cycle (cycleMu
	// serializes cycles; planners keep nothing between calls): a long
	// queue would otherwise allocate megabytes per cycle.
	pending := s.idBuf[:0]
	for id, j := range s.q.unfinished() {
		job := &j.rec.Job
		switch job.State {
		case api.StateRunning:
			r := sched.Running{ID: id}
			for _, n := range job.Nodes {
				r.Alloc = append(r.Alloc, sched.Allocation{Node: n, Resources: perNode(job)})
			}
			if job.StartTime != nil && job.TimeLimit > 0 {
				r.End = job.StartTime.Add(time.Duration(job.TimeLimit) * time.Second)
			}
			addRunningGPUs(&r, job)
			snap.Running = append(snap.Running, r)
		case api.StatePending:
			pending = append(pending, id)
		}
	}
	slices.Sort(pending) // sorting 8-byte IDs is far cheaper than sorting Pending values
	s.idBuf = pending
	snap.Pending = slices.Grow(s.pendingBuf[:0], len(pending))[:len(pending)]
	g := s.newGroupsLocked()
	for i, id := range pending {
		job := &s.q.unfinishedJob(id).rec.Job
		snap.Pending[i] = pendingOf(job, id, s.jobPriority(job, now), s.blockedOfLocked(job, job.ArrayTaskID, now, &notes))
		snap.Pending[i].Groups = g.pendingMembers(job, s.q.array(job.ArrayJobID))
	}
	snap.Pending = s.appendArrayTasksLocked(snap.Pending, now, g, &notes)
	if test != nil {
		p := pendingOf(test, testOnlyID, s.jobPriority(test, now), s.blockedOfLocked(test, nil, now, nil))
		p.Submit = now
		p.Groups = g.pendingMembers(test, nil)
		snap.Pending = append(snap.Pending, p)
	}
	s.pendingBuf = snap.Pending
	g.addRunning(snap.Running, s.q)
	snap.GroupLimits = g.Limits()
	return snap, notes
}

// groupBuilder describes one snapshot's jobs to package groups.
type groupBuilder struct {
	groups.Builder
	policies *policy.Set // nil without policies: no policy groups
	q        *queue
}

func (s *Server) newGroupsLocked() *groupBuilder {
	g := &groupBuilder{q: s.q}
	if !s.policies.Empty() {
		g.policies = s.policies
	}
	return g
}

// describe is what decides job's groups; a is its array, if any.
func (g *groupBuilder) describe(job *api.Job, a *arrayJob) groups.Job {
	d := groups.Job{User: job.User, Name: job.Name, Singleton: isSingleton(job.Spec.Dependency), Account: job.Spec.Account}
	if a != nil {
		d.Array, d.MaxRunning = a.base, a.maxRunning
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
		job := &q.unfinishedJob(running[i].ID).rec.Job
		running[i].Groups = g.Running(g.describe(job, q.array(job.ArrayJobID)))
	}
}
