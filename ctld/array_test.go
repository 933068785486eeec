package ctld

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func TestArrayPositions(t *testing.T) {
	a := newArrayJob(100, &api.JobArray{Ranges: []api.ArrayRange{{First: 1, Last: 1, Step: 1}, {First: 4, Last: 12, Step: 4}, {First: 20, Last: 22, Step: 1}}})
	if a.count != 7 {
		t.Fatalf("count %d, want 7", a.count)
	}
	want := map[int]uint64{1: 100, 4: 101, 8: 102, 12: 103, 20: 104, 21: 105, 22: 106}
	for index, id := range want {
		if got, ok := a.idOf(index); !ok || got != id {
			t.Errorf("idOf(%d) = %d, %v; want %d", index, got, ok, id)
		}
		if got, ok := a.indexOf(id); !ok || got != index {
			t.Errorf("indexOf(%d) = %d, %v; want %d", id, got, ok, index)
		}
	}
	for _, index := range []int{0, 2, 5, 13, 19, 23} {
		if id, ok := a.idOf(index); ok {
			t.Errorf("idOf(%d) = %d, want none", index, id)
		}
	}
	for _, id := range []uint64{99, 107} {
		if index, ok := a.indexOf(id); ok {
			t.Errorf("indexOf(%d) = %d, want none", id, index)
		}
	}
	rest := withoutIndexes(a.ranges, []int{8, 1, 22})
	if got := fmt.Sprint(firstIndexes(rest, 10)); got != "[4 12 20 21]" {
		t.Errorf("after removing 8, 1, 22: %s", got)
	}
}

// One request stores a 10,000-task array as one record; tasks start two
// at a time (%2) and each gets its own job record only when it starts.
func TestArrayOfTenThousandTasks(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	before, _ := tc.srv.store.LastJobID()
	base := tc.submit(arraySpec(t, "big", "0-9999%2"))
	if base != before+1 {
		t.Fatalf("array job ID %d, want %d", base, before+1)
	}
	recs, _ := tc.srv.store.Jobs()
	arrays, _ := tc.srv.store.Arrays()
	if len(recs) != 0 || len(arrays) != 1 || arrays[0].Tasks != 10000 {
		t.Fatalf("stored %d jobs and %d arrays (%+v), want one array of 10000 tasks", len(recs), len(arrays), arrays)
	}
	if next := tc.submit(script("after")); next != base+10000 {
		t.Fatalf("next job ID %d, want %d: the array reserves one ID per task", next, base+10000)
	}
	jobs, err := tc.client.Jobs(context.Background(), api.JobFilter{IDs: []uint64{base}})
	if err != nil || len(jobs) != 1 || jobs[0].ArrayTasks != "0-9999%2" || api.JobRefText(&jobs[0]) != fmt.Sprintf("%d_[0-9999%%2]", base) {
		t.Fatalf("listing of the array: %+v, %v", jobs, err)
	}

	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	// Two tasks and the other job, no third task: the %2 limit holds with
	// CPUs free.
	first := []api.LaunchRequest{node.waitLaunch(), node.waitLaunch(), node.waitLaunch()}
	slices.SortFunc(first, func(a, b api.LaunchRequest) int { return int(a.JobID) - int(b.JobID) })
	for i, l := range first[:2] {
		a := l.Array
		if l.JobID != base+uint64(i) || a == nil || a.JobID != base || a.TaskID != i || a.TaskCount != 10000 ||
			a.TaskMin != 0 || a.TaskMax != 9999 || a.TaskStep != 1 {
			t.Fatalf("launch %d: job %d array %+v", i, l.JobID, a)
		}
	}
	if first[2].JobID != base+10000 || first[2].Array != nil {
		t.Fatalf("launched %d, want the plain job", first[2].JobID)
	}
	time.Sleep(50 * time.Millisecond)
	tc.srv.Kick()
	time.Sleep(50 * time.Millisecond)
	node.noLaunch()
	if j := tc.jobRef(fmt.Sprintf("%d_2", base)); j.State != api.StatePending || j.ID != base+2 || j.Reason != api.ReasonJobArrayTaskLimit {
		t.Fatalf("task 2: %s %s id %d", j.State, j.Reason, j.ID)
	}
	if err := node.end(base, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != base+2 || l.Array.TaskID != 2 {
		t.Fatalf("after a task ended, launched %d (%+v), want task 2", l.JobID, l.Array)
	}
	recs, _ = tc.srv.store.Jobs()
	arrays, _ = tc.srv.store.Arrays()
	if len(recs) != 4 || len(arrays) != 1 || arrays[0].Pending[0].First != 3 {
		t.Fatalf("stored %d jobs, remainder %+v; want 4 jobs and tasks from 3 pending", len(recs), arrays[0].Pending[0])
	}

	// A restart keeps tasks and remainder apart and the count of running.
	tc.Restart()
	node.register()
	if j := tc.jobRef(fmt.Sprintf("%d_0", base)); j.State != api.StateCompleted || j.ArrayJobID != base {
		t.Fatalf("task 0 after restart: %+v", j)
	}
	time.Sleep(50 * time.Millisecond)
	node.noLaunch()
	if err := node.end(base+1, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != base+3 {
		t.Fatalf("after restart, launched %d, want task 3", l.JobID)
	}
}

func TestArrayCancel(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	base := tc.submit(arraySpec(t, "arr", "0-4"))
	if l := node.waitLaunch(); l.JobID != base {
		t.Fatalf("launched %d, want task 0", l.JobID)
	}
	// One pending task by its reference: it gets a record of its own.
	resp, err := tc.client.Cancel(context.Background(), api.CancelRequest{Tasks: []api.TaskRef{{JobID: base, Task: 3}}})
	if err != nil || !slices.Equal(resp.Cancelled, []uint64{base + 3}) || len(resp.Errors) != 0 {
		t.Fatalf("cancel task 3: %+v, %v", resp, err)
	}
	if j := tc.job(base + 3); j.State != api.StateCancelled || j.ArrayTaskID == nil || *j.ArrayTaskID != 3 || j.StartTime != nil {
		t.Fatalf("task 3: %+v", j)
	}
	jobs, _ := tc.client.Jobs(context.Background(), api.JobFilter{IDs: []uint64{base}})
	var refs []string
	for _, j := range jobs {
		refs = append(refs, api.JobRefText(&j))
	}
	want := []string{fmt.Sprintf("%d_0", base), fmt.Sprintf("%d_[1-2,4]", base), fmt.Sprintf("%d_3", base)}
	if fmt.Sprint(refs) != fmt.Sprint(want) {
		t.Fatalf("listing %v, want %v", refs, want)
	}
	// The array ID ends everything: the remainder at once, the running
	// task through its node.
	resp, err = tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{base}})
	if err != nil || !slices.Contains(resp.Cancelled, base) || len(resp.Errors) != 0 {
		t.Fatalf("cancel array: %+v, %v", resp, err)
	}
	if sig := node.signalled(); !slices.Equal(sig, []uint64{base}) {
		t.Fatalf("signals %v, want the running task", sig)
	}
	if j := tc.jobRef(fmt.Sprintf("%d_4", base)); j.State != api.StateCancelled || j.ID != base+4 {
		t.Fatalf("task 4: %s id %d", j.State, j.ID)
	}
	if err := node.end(base, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if jobs, _ := tc.client.Jobs(context.Background(), api.JobFilter{}); len(jobs) != 0 {
		t.Fatalf("still listed: %+v", jobs)
	}
	// Bad references name what is wrong.
	resp, _ = tc.client.Cancel(context.Background(), api.CancelRequest{Tasks: []api.TaskRef{{JobID: base, Task: 9}}})
	if msg := resp.Errors[base]; msg != fmt.Sprintf("array job %d has no task 9", base) {
		t.Fatalf("cancel task 9: %+v", resp)
	}
}

func TestArraySubmitChecks(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.Pipeline.MaxArrayTasks = 100 })
	for _, tt := range []struct {
		array api.JobArray
		want  string
	}{
		{api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 100, Step: 1}}}, "101 tasks is more than this cluster's limit of 100"},
		{api.JobArray{Ranges: []api.ArrayRange{{First: 5, Last: 9, Step: 1}, {First: 0, Last: 3, Step: 1}}}, "ranges must be sorted, disjoint"},
		{api.JobArray{}, "no indexes"},
	} {
		spec := script("bad")
		spec.Array = &tt.array
		if err := tc.submitErr(spec); statusOf(err) != 400 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want 400 %q", tt.array, err, tt.want)
		}
	}
}
