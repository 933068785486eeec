package fairshare

import (
	"iter"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
)

// Cluster is what one cycle's priorities are computed from. The
// controller serves it from its records while it holds its own lock.
type Cluster interface {
	// Running lists the running jobs: they are charged up to now.
	Running() iter.Seq[*api.Job]
	// Pending lists the pending jobs, an array's pending remainder as one.
	Pending() iter.Seq[*api.Job]
	// Size is what the size factor measures jobs against.
	Size() priority.Cluster
	// Blocked is what keeps a pending job from running at now (a hold, a
	// begin time, a dependency), "" if nothing: eligibility follows it
	// in the very cycle it changes.
	Blocked(job *api.Job, now time.Time) api.Reason
}

// cycleShares is what one scheduling cycle computes once for all its
// pending jobs.
type cycleShares struct {
	at     time.Time
	fs     priority.Fairshares
	cl     priority.Cluster
	owners []priority.Job
}

// Priority is a pending job's multifactor priority (package priority):
// fairshare from the decayed usage of the job's user and account, age
// from the time the job has been eligible, and size relative to the
// cluster, each times its weight; nice is the caller's to subtract. The
// first call of a cycle (all calls of one snapshot share now) charges
// running jobs up to now, notes which pending jobs are eligible, and
// computes every association's fairshare once, from c.
func (f *State) Priority(j *api.Job, now time.Time, c Cluster) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.cycle.at.Equal(now) {
		f.prepareCycle(now, c)
	}
	return f.breakdown(j, &f.cycle, now).Priority
}

// Eligible is when a pending job's eligible wait began, what its age
// counts from; zero while a hold, begin time or dependency keeps it.
func (f *State) Eligible(j *api.Job, now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.eligibleAt(j, now)
}

// Prepare begins a cycle at now: running jobs are charged up to now,
// pending jobs' eligibility is noted and every association's fairshare is
// computed, once per now. A scheduling cycle calls it as its own step
// before building its snapshot, whose Priority calls at the same now then
// only read.
func (f *State) Prepare(now time.Time, c Cluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.cycle.at.Equal(now) {
		f.prepareCycle(now, c)
	}
}

// prepareCycle charges running jobs up to now, notes which pending jobs
// are eligible, and computes fairshares for now. f.mu is held.
func (f *State) prepareCycle(now time.Time, cl Cluster) {
	f.chargeRunning(cl.Running(), now)
	c := cycleShares{at: now, owners: f.cycle.owners[:0]}
	seen := make(map[priority.Assoc]bool)
	for job := range cl.Pending() {
		f.noteEligibility(job.ID, cl.Blocked(job, now), now)
		if k := (priority.Assoc{User: job.User, Account: job.Spec.Account}); !seen[k] {
			seen[k] = true
			c.owners = append(c.owners, priority.Job{User: k.User, Account: k.Account})
		}
	}
	c.cl = cl.Size()
	c.fs = f.calc.Fairshares(f.ledger, now, c.owners)
	f.cycle = c
}

// breakdown is a pending job's priority with its factors (nice not
// included). f.mu is held.
func (f *State) breakdown(j *api.Job, c *cycleShares, now time.Time) priority.Breakdown {
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
// from what blocks it now. f.mu is held.
func (f *State) noteEligibility(id uint64, reason api.Reason, now time.Time) {
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
func (f *State) eligibleAt(j *api.Job, now time.Time) time.Time {
	if f.blocked[j.ID] {
		return time.Time{}
	}
	if t, ok := f.released[j.ID]; ok {
		return t
	}
	if f.rules.HeldOrEarly(j, now) {
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
