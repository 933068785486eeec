package ctld

import (
	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
)

// ownerCounts is how many PENDING jobs with a record of their own each
// owner (user, account) has, kept as the queue tracks jobs: the policy
// tally, `corral usage` and the fairshare tree's owners read it instead
// of walking 100,000 pending jobs on every dashboard render. Derived:
// rebuilt as the queue is loaded, never stored.
type ownerCounts struct {
	pending map[priority.Assoc]int
}

// pendingCount is where a job is counted in ownerCounts, if it is.
type pendingCount struct {
	counted bool
	as      priority.Assoc
}

// note counts j, whose record is installed, by its state now: a job that
// left PENDING (or changed owner while pending) leaves its old count.
func (c *ownerCounts) note(j *job) {
	pend := j.rec.Job.State == api.StatePending
	key := priority.Assoc{User: j.rec.Job.User, Account: j.rec.Job.Spec.Account}
	if j.pendingAs.counted && (!pend || j.pendingAs.as != key) {
		if c.pending[j.pendingAs.as]--; c.pending[j.pendingAs.as] == 0 {
			delete(c.pending, j.pendingAs.as)
		}
		j.pendingAs = pendingCount{}
	}
	if pend && !j.pendingAs.counted {
		if c.pending == nil {
			c.pending = make(map[priority.Assoc]int)
		}
		c.pending[key]++
		j.pendingAs = pendingCount{counted: true, as: key}
	}
}

// pendingOwners yields every owner with pending jobs of their own record
// and how many, in no particular order.
func (q *queue) pendingOwners(yield func(priority.Assoc, int) bool) {
	for k, n := range q.owners.pending {
		if !yield(k, n) {
			return
		}
	}
}
