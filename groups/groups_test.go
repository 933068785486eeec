package groups

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/policy"
	"github.com/corral-hpc/corral/sched"
)

func TestBuilder(t *testing.T) {
	var b Builder
	task := Job{User: "alice", Name: "a", Array: 7, MaxRunning: 2, Account: "physics",
		UserLimits: api.Limits{MaxCPUs: 4}, AccountLimits: api.Limits{MaxRunningJobs: 3}, Use: policy.Request{CPUs: 2}}
	solo := Job{User: "alice", Name: "solo", Singleton: true}
	got := fmt.Sprint(b.Pending(task), b.Pending(solo))
	want := fmt.Sprint([]sched.Member{{Group: "array\x007", Use: 1}, {Group: "policy\x00user\x00alice\x00cpus", Use: 2},
		{Group: "policy\x00account\x00physics\x00jobs", Use: 1}}, []sched.Member{{Group: "singleton\x00alice\x00solo", Use: 1}})
	if got != want {
		t.Fatalf("pending members %q, want %q", got, want)
	}
	limits := b.Limits()
	for name, l := range map[string]sched.GroupLimit{
		"array\x007":                           {Max: 2, Reason: api.ReasonJobArrayTaskLimit},
		"singleton\x00alice\x00solo":           {Max: 1, Reason: api.ReasonDependency},
		"policy\x00user\x00alice\x00cpus":      {Max: 4, Reason: api.ReasonPolicyMaxCPUs},
		"policy\x00account\x00physics\x00jobs": {Max: 3, Reason: api.ReasonPolicyMaxRunningJobs},
	} {
		if limits[name] != l {
			t.Errorf("limit of %q: %+v, want %+v", name, limits[name], l)
		}
	}
	if len(limits) != 4 {
		t.Fatalf("%d limits: %v", len(limits), limits)
	}
	// Running jobs count only in limited groups, and any job of a
	// singleton's name counts.
	for _, c := range []struct {
		job  Job
		want string
	}{
		{Job{User: "alice", Name: "solo"}, fmt.Sprint([]sched.Member{{Group: "singleton\x00alice\x00solo", Use: 1}})},
		{Job{User: "bob", Name: "solo", Array: 8, MaxRunning: 1}, "[]"},
		{task, fmt.Sprint(b.Pending(task))},
	} {
		if got := fmt.Sprint(b.Running(c.job)); got != c.want {
			t.Errorf("running %+v: %q, want %q", c.job, got, c.want)
		}
	}
	var none Builder
	if none.Pending(Job{User: "x", Name: "y"}) != nil || none.Running(solo) != nil || none.Limits() != nil {
		t.Fatal("a job without limited groups has groups")
	}
}

// The policy groups hold a job exactly when package policy's own rule
// (policy.Tally.Check, which the controller applied before the planner
// knew the limits) does, with the same reason.
func TestPolicyGroupsAgreeWithTallyCheck(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	set, err := policy.Load(filepath.Join(t.TempDir(), "policies.json"))
	if err != nil {
		t.Fatal(err)
	}
	limits := func() api.Limits {
		return api.Limits{MaxRunningJobs: rng.Intn(4), MaxCPUs: rng.Intn(10), MaxMemBytes: int64(rng.Intn(10)) << 30, MaxFGPU: 100 * rng.Intn(4)}
	}
	users, accounts := []string{"alice", "bob"}, []string{"", "physics", "chem"}
	for round := 0; round < 200; round++ {
		for _, u := range users {
			if err := set.Put(api.Policy{Kind: api.PolicyUser, Name: u, Limits: limits()}); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range accounts[1:] {
			if err := set.Put(api.Policy{Kind: api.PolicyAccount, Name: a, Limits: limits()}); err != nil {
				t.Fatal(err)
			}
		}
		describe := func() Job {
			j := Job{User: users[rng.Intn(2)], Name: "x", Account: accounts[rng.Intn(3)],
				Use: policy.Request{CPUs: 1 + rng.Intn(4), MemBytes: int64(rng.Intn(4)) << 30, FGPU: 50 * rng.Intn(3)}}
			j.UserLimits, j.AccountLimits = set.Limits(j.User, j.Account)
			return j
		}
		probe := describe()
		tally := policy.NewTally()
		var b Builder
		snap := sched.Snapshot{Nodes: []sched.Node{{Name: "n", Capacity: sched.Resources{CPUs: 1000, MemBytes: 1 << 50, FGPU: 1 << 20}, Up: true}},
			Partitions: []sched.Partition{{Name: "p", Nodes: []string{"n"}}},
			Pending:    []sched.Pending{{ID: 1, Partition: "p", Groups: b.Pending(probe)}}}
		for i := rng.Intn(6); i > 0; i-- {
			r := describe()
			tally.AddRunning(r.User, r.Account, r.Use)
			snap.Running = append(snap.Running, sched.Running{ID: uint64(100 + i), Groups: b.Running(r),
				Alloc: []sched.Allocation{{Node: "n", Resources: sched.Resources{CPUs: 1}}}})
		}
		snap.GroupLimits = b.Limits()
		want := tally.Check(set, probe.User, probe.Account, probe.Use)
		plan := sched.FirstFit{}.Plan(snap)
		var got api.Reason
		if len(plan.Starts) == 0 {
			got = plan.Pending[0].Reason
		}
		if got != want {
			t.Fatalf("round %d: the planner says %q, policy %q (probe %+v, tally %+v)", round, got, want, probe, tally)
		}
	}
}

// TestLimitedSaysWhetherPendingJoinsAGroup: a job Limited calls free
// joins nothing and sets no limit; each way of joining one is seen.
func TestLimitedSaysWhetherPendingJoinsAGroup(t *testing.T) {
	for _, c := range []struct {
		name string
		job  Job
		want bool
	}{
		{"plain", Job{User: "alice", Name: "a", Account: "physics"}, false},
		{"array without %N", Job{User: "alice", Array: 7}, false},
		{"limits that are not running limits", Job{User: "alice", Account: "physics",
			UserLimits: api.Limits{MaxPendingJobs: 5, MaxCPUsPerJob: 8}}, false},
		{"array %N", Job{User: "alice", Array: 7, MaxRunning: 2}, true},
		{"singleton", Job{User: "alice", Name: "a", Singleton: true}, true},
		{"user running jobs", Job{User: "alice", UserLimits: api.Limits{MaxRunningJobs: 1}}, true},
		{"user CPUs", Job{User: "alice", UserLimits: api.Limits{MaxCPUs: 4}, Use: policy.Request{CPUs: 1}}, true},
		{"account memory", Job{User: "alice", Account: "physics", AccountLimits: api.Limits{MaxMemBytes: 1 << 30}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.job.Limited(); got != c.want {
				t.Fatalf("Limited = %v, want %v", got, c.want)
			}
			var b Builder
			if m := b.Pending(c.job); !c.want && (m != nil || b.Limits() != nil) {
				t.Fatalf("a job Limited calls free joins %v with limits %v", m, b.Limits())
			} else if c.want && m == nil {
				t.Fatal("a limited job joins no group")
			}
		})
	}
}
