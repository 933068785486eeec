// Package groups names the limited groups corral puts jobs in, for the
// planner's group limits (sched.Snapshot.GroupLimits): an array's %N, a
// user's jobs of one name when one of them is a singleton, and the
// running limits of a user's and an account's policy. The controller and
// the trace simulator both describe their jobs to a Builder, so they hand
// the planner the same groups and limits for the same jobs.
package groups

import (
	"strconv"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/policy"
	"github.com/corral-hpc/corral/sched"
)

// Job is what decides a job's groups.
type Job struct {
	User, Name string
	// Array is the array job the job is a task of (0: none); MaxRunning
	// is that array's %N (0: no limit).
	Array      uint64
	MaxRunning int
	// Singleton: the job may start only while no job of its user and
	// name runs (a pending job's singleton dependency).
	Singleton bool
	// Account, the policies' limits of the user and of the account, and
	// what the job holds while it runs, counted against them.
	Account       string
	UserLimits    api.Limits
	AccountLimits api.Limits
	Use           policy.Request
}

// Builder collects one snapshot's groups. Describe every pending job
// first (Pending sets the limits), then every running one (Running counts
// it in the limited groups it is in). The zero value is ready to use.
type Builder struct {
	limits map[string]sched.GroupLimit
}

// Limits are the limits of the groups the pending jobs named; nil when
// none did.
func (b *Builder) Limits() map[string]sched.GroupLimit { return b.limits }

// Pending is the groups a pending job joins when it starts, in the order
// their reasons take precedence: its array's %N (JobArrayTaskLimit), its
// singleton dependency (Dependency), then its user's and its account's
// policy limits (policy.RunningLimits, in its order).
func (b *Builder) Pending(j Job) []sched.Member {
	return b.members(j, true)
}

// Limited reports whether j, pending, joins any limited group: when it
// does not, Pending returns nil and sets no limit, and a caller with long
// queues of such jobs may skip it.
func (j *Job) Limited() bool {
	if j.Array != 0 && j.MaxRunning > 0 || j.Singleton {
		return true
	}
	for _, l := range []api.Limits{j.UserLimits, j.AccountLimits} {
		for _, x := range policy.RunningLimits(l, j.Use) {
			if x.Max > 0 {
				return true
			}
		}
	}
	return false
}

// Running is the limited groups a running job counts in.
func (b *Builder) Running(j Job) []sched.Member {
	if b.limits == nil {
		return nil
	}
	j.Singleton = true // any job of the name holds a singleton back
	return b.members(j, false)
}

func (b *Builder) members(j Job, pending bool) []sched.Member {
	var out []sched.Member
	add := func(name string, max, use int64, why api.Reason) {
		if pending {
			if b.limits == nil {
				b.limits = make(map[string]sched.GroupLimit)
			}
			b.limits[name] = sched.GroupLimit{Max: max, Reason: why}
		} else if _, ok := b.limits[name]; !ok {
			return
		}
		out = append(out, sched.Member{Group: name, Use: use})
	}
	if j.Array != 0 && j.MaxRunning > 0 {
		add("array\x00"+strconv.FormatUint(j.Array, 10), int64(j.MaxRunning), 1, api.ReasonJobArrayTaskLimit)
	}
	if j.Singleton {
		add("singleton\x00"+j.User+"\x00"+j.Name, 1, 1, api.ReasonDependency)
	}
	policyLimits := func(kind, owner string, l api.Limits) {
		for _, x := range policy.RunningLimits(l, j.Use) {
			if x.Max > 0 {
				add("policy\x00"+kind+"\x00"+owner+"\x00"+x.What, x.Max, x.Use, x.Reason)
			}
		}
	}
	policyLimits(api.PolicyUser, j.User, j.UserLimits)
	if j.Account != "" {
		policyLimits(api.PolicyAccount, j.Account, j.AccountLimits)
	}
	return out
}
