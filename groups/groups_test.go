package groups

import (
	"fmt"
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
