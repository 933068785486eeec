package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
)

// jobPriority is the one place a pending job's priority comes from; the
// scheduler calls it for every pending job when it builds a snapshot and
// shows the result in Job.Priority.
//
// It is Slurm's multifactor priority (package priority): fairshare from
// the decayed usage of the job's user and account, age from the time the
// job has been eligible, and size relative to the cluster, each times its
// weight. Nice is subtracted afterwards, with hold, begin and dependency
// checks (pipelinePendingLocked). The first call of a cycle (all calls of
// one snapshot share now) charges running jobs up to now and computes
// every association's fairshare once. The caller holds s.mu (read is
// enough).
func (s *Server) jobPriority(j *api.Job, now time.Time) int64 {
	f := s.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.cycle.at.Equal(now) {
		s.prepareCycleLocked(now)
	}
	return f.breakdown(j, &f.cycle, now).Priority
}

// prepareCycleLocked charges running jobs up to now, notes which pending
// jobs are eligible, and computes fairshares for now. s.mu (read) and
// s.fs.mu are held.
func (s *Server) prepareCycleLocked(now time.Time) {
	f := s.fs
	f.chargeRunning(s.active, now)
	c := cycleShares{at: now, owners: f.cycle.owners[:0]}
	seen := make(map[priority.Assoc]bool)
	add := func(job *api.Job) {
		f.noteEligibility(job.ID, job.Reason, now)
		if k := (priority.Assoc{User: job.User, Account: job.Spec.Account}); !seen[k] {
			seen[k] = true
			c.owners = append(c.owners, priority.Job{User: k.User, Account: k.Account})
		}
	}
	for _, j := range s.active {
		if j.state() == api.StatePending {
			add(&j.rec.Job)
		}
	}
	for _, a := range s.pipe.arrays {
		if a.rem != nil && a.rem.Job.State == api.StatePending {
			add(&a.rem.Job)
		}
	}
	c.cl = s.clusterSizeLocked()
	c.fs = f.calc.Fairshares(f.ledger, now, c.owners)
	f.cycle = c
}

// clusterSizeLocked is what the size factor measures jobs against: every
// known node, up or not, so priorities do not jump when a node flaps.
func (s *Server) clusterSizeLocked() priority.Cluster {
	var cl priority.Cluster
	for _, n := range s.nodes {
		cl.Nodes++
		cl.CPUs += n.rec.CPUs
	}
	return cl
}

// breakdown is a pending job's priority with its factors (nice not
// included). f.mu is held.
func (f *fairshare) breakdown(j *api.Job, c *cycleShares, now time.Time) priority.Breakdown {
	nodes := max(j.NodeCount, 1)
	pj := priority.Job{User: j.User, Account: j.Spec.Account, Eligible: f.eligibleAt(j, now),
		Nodes: nodes, CPUs: j.CPUs * nodes}
	fs := c.fs
	if !fs.Has(pj.User, pj.Account) {
		// A job the cycle did not see (a test-only submit of a new
		// user): rank its owner along with everyone else's.
		fs = f.calc.Fairshares(f.ledger, now, append(c.owners[:len(c.owners):len(c.owners)], pj))
	}
	return f.calc.Priority(pj, fs, now, c.cl)
}

// Reasons that make a pending job ineligible: its age does not grow while
// one holds (Slurm's eligible time).
func ineligible(r api.Reason) bool {
	switch r {
	case api.ReasonJobHeld, api.ReasonJobHeldAdmin, api.ReasonDependency,
		api.ReasonDependencyNeverSatisfied, api.ReasonBeginTime:
		return true
	}
	return false
}

// noteEligibility follows a pending job through blocked and eligible
// from the reason the last cycle gave it. f.mu is held.
func (f *fairshare) noteEligibility(id uint64, reason api.Reason, now time.Time) {
	switch {
	case ineligible(reason):
		f.blocked[id] = true
		delete(f.released, id)
	case f.blocked[id]:
		delete(f.blocked, id)
		f.released[id] = now
	}
}

// eligibleAt is when the job's eligible wait began; zero while it is not
// eligible. Without a hold, begin time or dependency that was seen to
// block it, that is its submit (or latest requeue) time, or its begin time
// if later. f.mu is held.
func (f *fairshare) eligibleAt(j *api.Job, now time.Time) time.Time {
	if f.blocked[j.ID] {
		return time.Time{}
	}
	if t, ok := f.released[j.ID]; ok {
		return t
	}
	if heldOrEarly(j, now) != "" {
		return time.Time{}
	}
	at := j.SubmitTime
	for i := len(j.History) - 1; i >= 0; i-- {
		// A failed launch puts a job back without ending its wait.
		if h := j.History[i]; h.State == api.StatePending && h.Reason != api.ReasonLaunchFailed {
			at = j.History[i].Time
			break
		}
	}
	if b := j.Spec.Begin; b != nil && b.After(at) {
		at = *b
	}
	return at
}
