package ctld

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Each case: job A (and C) end as given; B depends on them and either
// starts, or can never start and is cancelled (or kept pending).
func TestDependencyOutcomes(t *testing.T) {
	no := false
	tests := []struct {
		name    string
		dep     string // %[1]d is A, %[2]d is C
		aEnds   api.JobState
		cEnds   api.JobState // "" leaves C pending
		keep    bool         // --kill-on-invalid-dep=no
		starts  bool
		waiting bool // still pending with reason Dependency
	}{
		{"afterok met", "afterok:%[1]d", api.StateCompleted, "", false, true, false},
		{"afterok failed", "afterok:%[1]d", api.StateFailed, "", false, false, false},
		{"afternotok met", "afternotok:%[1]d", api.StateTimeout, "", false, true, false},
		{"afternotok completed", "afternotok:%[1]d", api.StateCompleted, "", false, false, false},
		{"afterany", "afterany:%[1]d", api.StateOutOfMemory, "", false, true, false},
		{"and waits for both", "afterok:%[1]d,afterok:%[2]d", api.StateCompleted, "", false, false, true},
		{"and met", "afterok:%[1]d,afterok:%[2]d", api.StateCompleted, api.StateCompleted, false, true, false},
		{"and fails with one", "afterok:%[1]d,afterany:%[2]d", api.StateFailed, "", false, false, false},
		{"or waits for the other", "afterok:%[1]d?afterok:%[2]d", api.StateFailed, "", false, false, true},
		{"or met by one", "afterok:%[1]d?afterok:%[2]d", api.StateFailed, api.StateCompleted, false, true, false},
		{"or never", "afterok:%[1]d?afterok:%[2]d", api.StateFailed, api.StateCancelled, false, false, false},
		{"never kept", "afterok:%[1]d", api.StateFailed, "", true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := MustServer(t, eventsOnly)
			node := newFakeNode(tc, "n1", 2, 8<<30)
			node.register()
			a := tc.submit(script("a"))
			c := tc.submit(script("c"))
			node.launchedIDs(2)
			spec := dependent(t, "b", fmt.Sprintf(tt.dep, a, c))
			if tt.keep {
				spec.KillOnInvalidDep = &no
			}
			b := tc.submit(spec)
			tc.waitJob(b, "reason Dependency", reasonIs(api.ReasonDependency))
			if err := node.end(a, tt.aEnds, 1); err != nil {
				t.Fatal(err)
			}
			if tt.cEnds != "" {
				if err := node.end(c, tt.cEnds, 0); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case tt.starts:
				if l := node.waitLaunch(); l.JobID != b {
					t.Fatalf("launched %d, want b=%d", l.JobID, b)
				}
			case tt.waiting:
				tc.srv.Kick()
				time.Sleep(50 * time.Millisecond)
				if j := tc.job(b); j.State != api.StatePending || j.Reason != api.ReasonDependency {
					t.Fatalf("b: %s %s, want PENDING (Dependency)", j.State, j.Reason)
				}
			case tt.keep:
				j := tc.waitJob(b, "never satisfied", reasonIs(api.ReasonDependencyNeverSatisfied))
				if j.State != api.StatePending {
					t.Fatalf("b: %s, want it kept PENDING", j.State)
				}
			default:
				j := tc.waitJob(b, "cancelled", inState(api.StateCancelled))
				last := j.History[len(j.History)-1]
				if j.Reason != api.ReasonDependencyNeverSatisfied || last.Reason != api.ReasonDependencyNeverSatisfied ||
					!strings.Contains(j.Message, "can never be satisfied") {
					t.Fatalf("b: reason %s, history %+v, message %q", j.Reason, last, j.Message)
				}
			}
		})
	}
}

// The cluster's default decides when the job does not say; the admin sets
// it in Config or in corral.conf.
func TestKillOnInvalidDepDefault(t *testing.T) {
	no := false
	for name, setting := range map[string]func(*Config){
		"Config":      func(c *Config) { c.Pipeline.KillOnInvalidDep = &no },
		"corral.conf": withPartitions("PartitionName=batch Nodes=ALL\nKillOnInvalidDep=NO\n"),
	} {
		t.Run(name, func(t *testing.T) { testKillOnInvalidDepDefault(t, setting) })
	}
}

func testKillOnInvalidDepDefault(t *testing.T, setting func(*Config)) {
	tc := MustServer(t, eventsOnly, setting)
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	a := tc.submit(script("a"))
	node.waitLaunch()
	b := tc.submit(dependent(t, "b", fmt.Sprintf("afterok:%d", a)))
	yes := true
	spec := dependent(t, "c", fmt.Sprintf("afterok:%d", a))
	spec.KillOnInvalidDep = &yes
	c := tc.submit(spec)
	if err := node.end(a, api.StateFailed, 2); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(c, "cancelled", inState(api.StateCancelled))
	if j := tc.waitJob(b, "never satisfied", reasonIs(api.ReasonDependencyNeverSatisfied)); j.State != api.StatePending {
		t.Fatalf("b: %s", j.State)
	}
}

func TestDependencyAfterStartAndSingleton(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	a := tc.submit(script("a"))
	node.waitLaunch()
	// after: starts once a has started, while it runs.
	b := tc.submit(dependent(t, "b", fmt.Sprintf("after:%d", a)))
	if l := node.waitLaunch(); l.JobID != b {
		t.Fatalf("launched %d, want b", l.JobID)
	}
	// singleton: one "solo" of this user at a time, though CPUs are free.
	s1 := tc.submit(dependent(t, "solo", "singleton"))
	s2 := tc.submit(dependent(t, "solo", "singleton"))
	if l := node.waitLaunch(); l.JobID != s1 {
		t.Fatalf("launched %d, want the first singleton %d", l.JobID, s1)
	}
	tc.waitJob(s2, "reason Dependency", reasonIs(api.ReasonDependency))
	node.noLaunch()
	if err := node.end(s1, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != s2 {
		t.Fatalf("launched %d, want the second singleton %d", l.JobID, s2)
	}
}

func TestDependencyOnArrays(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 3, 8<<30)
	node.register()
	arr := tc.submit(arraySpec(t, "arr", "0-2"))
	if launched := node.launchedIDs(3); fmt.Sprint(launched) != fmt.Sprint([]uint64{arr, arr + 1, arr + 2}) {
		t.Fatalf("launched %v, want the three tasks", launched)
	}
	whole := tc.submit(dependent(t, "whole", fmt.Sprintf("afterok:%d", arr)))
	one := tc.submit(dependent(t, "one", fmt.Sprintf("afterany:%d_1", arr)))
	tc.waitJob(one, "reason Dependency", reasonIs(api.ReasonDependency))
	if err := node.end(arr+1, api.StateFailed, 1); err != nil { // task 1
		t.Fatal(err)
	}
	// Task 1 ended: "one" may start; "whole" can never (a task failed).
	if l := node.waitLaunch(); l.JobID != one {
		t.Fatalf("launched %d, want job %d", l.JobID, one)
	}
	tc.waitJob(whole, "cancelled", inState(api.StateCancelled))

	// Unknown jobs and tasks are refused at submit, naming them.
	for dep, want := range map[string]string{
		"afterok:999999":                 "job 999999 does not exist",
		fmt.Sprintf("afterok:%d_7", arr): fmt.Sprintf("array job %d has no task 7", arr),
		fmt.Sprintf("afterok:%d_0", one): fmt.Sprintf("job %d is not an array job", one),
	} {
		if err := tc.submitErr(dependent(t, "bad", dep)); statusOf(err) != 400 || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want 400 %q", dep, err, want)
		}
	}
}

// aftercorr: task i waits for task i of the other array only.
func TestDependencyAfterCorr(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	first := tc.submit(arraySpec(t, "first", "0-1"))
	node.launchedIDs(2)
	spec := arraySpec(t, "second", "0-1")
	spec.Dependency = dependent(t, "", fmt.Sprintf("aftercorr:%d", first)).Dependency
	second := tc.submit(spec)
	if err := node.end(first+1, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != second+1 {
		t.Fatalf("launched %d, want task 1 of the second array (%d)", l.JobID, second+1)
	}
	if err := node.end(first, api.StateFailed, 1); err != nil {
		t.Fatal(err)
	}
	if j := tc.waitJob(second, "task 0 cancelled", inState(api.StateCancelled)); j.Reason != api.ReasonDependencyNeverSatisfied {
		t.Fatalf("task 0: %s", j.Reason)
	}
}
