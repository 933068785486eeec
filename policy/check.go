package policy

import (
	"fmt"

	"github.com/corral-hpc/corral/api"
)

// CheckSubmit refuses a job over a per-job maximum of l, or one that
// would take its owner past the pending-jobs maximum (pending counts the
// owner's pending jobs before this one; n is how many jobs the submit
// adds, an array's tasks). who names the policy in the message ("user
// alice").
func CheckSubmit(who string, l api.Limits, r Request, pending, n int) error {
	switch {
	case l.MaxCPUsPerJob > 0 && r.CPUs > l.MaxCPUsPerJob:
		return fmt.Errorf("the job asks for %d CPUs; the policy of %s allows at most %d per job", r.CPUs, who, l.MaxCPUsPerJob)
	case l.MaxMemPerJob > 0 && r.MemBytes > l.MaxMemPerJob:
		return fmt.Errorf("the job asks for %s of memory; the policy of %s allows at most %s per job", size(r.MemBytes), who, size(l.MaxMemPerJob))
	case l.MaxFGPUPerJob > 0 && r.FGPU > l.MaxFGPUPerJob:
		return fmt.Errorf("the job asks for %s fGPU; the policy of %s allows at most %s per job", fgpu(r.FGPU), who, fgpu(l.MaxFGPUPerJob))
	case l.MaxPendingJobs > 0 && pending+n > l.MaxPendingJobs:
		return fmt.Errorf("%s has %d pending jobs; the policy allows at most %d", who, pending, l.MaxPendingJobs)
	}
	return nil
}

// RunningLimit is one limit of a policy on what its owner runs at once:
// Max (0: unset) of What, of which a job uses Use, held back with Reason.
type RunningLimit struct {
	What     string // jobs, cpus, mem, fgpu
	Max, Use int64
	Reason   api.Reason
}

// RunningLimits are l's limits on what runs at once, with what a job
// asking r uses of each, in the order their reasons take precedence. It
// is the one statement of the rule: CheckStart applies it to a tally, and
// package groups hands it to the planner. An array, not a slice: the
// controller asks it for every pending job of every cycle.
func RunningLimits(l api.Limits, r Request) [4]RunningLimit {
	return [4]RunningLimit{
		{"jobs", int64(l.MaxRunningJobs), 1, api.ReasonPolicyMaxRunningJobs},
		{"cpus", int64(l.MaxCPUs), int64(r.CPUs), api.ReasonPolicyMaxCPUs},
		{"mem", l.MaxMemBytes, r.MemBytes, api.ReasonPolicyMaxMem},
		{"fgpu", int64(l.MaxFGPU), int64(r.FGPU), api.ReasonPolicyMaxFGPU},
	}
}

// CheckStart returns the reason a job may not start now under l, given
// what its owner already runs; "" when it may. A job that could never
// start under l (over a running limit on its own) is held too: an admin
// may raise the limit.
func CheckStart(l api.Limits, held InUse, r Request) api.Reason {
	has := RunningLimits(l, held.Request)
	has[0].Use = int64(held.Running)
	for i, x := range RunningLimits(l, r) {
		if x.Max > 0 && has[i].Use+x.Use > x.Max {
			return x.Reason
		}
	}
	return ""
}

// Tally counts what each user and account holds, for CheckStart. The
// zero value is not usable; use NewTally.
type Tally struct {
	Users, Accounts map[string]InUse
}

// NewTally is an empty tally.
func NewTally() *Tally {
	return &Tally{Users: map[string]InUse{}, Accounts: map[string]InUse{}}
}

// AddRunning counts a running job of user and account ("" for none).
func (t *Tally) AddRunning(user, account string, r Request) {
	add := func(m map[string]InUse, name string) {
		u := m[name]
		u.Running++
		u.Request = u.Request.Add(r)
		m[name] = u
	}
	add(t.Users, user)
	if account != "" {
		add(t.Accounts, account)
	}
}

// AddPending counts n pending jobs of user and account ("" for none).
func (t *Tally) AddPending(user, account string, n int) {
	u := t.Users[user]
	u.Pending += n
	t.Users[user] = u
	if account != "" {
		a := t.Accounts[account]
		a.Pending += n
		t.Accounts[account] = a
	}
}

// Check is CheckStart for both of a job's policies in s.
func (t *Tally) Check(s *Set, user, account string, r Request) api.Reason {
	ul, al := s.Limits(user, account)
	if why := CheckStart(ul, t.Users[user], r); why != "" {
		return why
	}
	if account == "" {
		return ""
	}
	return CheckStart(al, t.Accounts[account], r)
}

func size(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dG", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	}
	return fmt.Sprintf("%d bytes", b)
}

func fgpu(h int) string {
	if h%100 == 0 {
		return fmt.Sprint(h / 100)
	}
	return fmt.Sprintf("%.2f", float64(h)/100)
}
