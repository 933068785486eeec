package ctld

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/priority"
)

// TestOwnerCounts drives the queue's track path with random submits,
// starts, suspends, ends, cancels, requeues and owner changes, each a
// fresh record as a commit installs it, and checks the per-owner pending
// counts and the prio entries for named IDs against a brute-force walk.
func TestOwnerCounts(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	q := newQueue()
	users, accounts := []string{"alice", "bob", "carol"}, []string{"", "physics", "chem"}
	states := []api.JobState{api.StatePending, api.StatePending, api.StateRunning, api.StateSuspended,
		api.StateCompleted, api.StateCancelled, api.StateFailed}
	for step := range 20000 {
		id := uint64(1 + rng.Intn(400))
		rec := store.JobRecord{Job: api.Job{ID: id, User: users[rng.Intn(len(users))], State: states[rng.Intn(len(states))]}}
		if old := q.job(id); old != nil && rng.Intn(4) != 0 {
			rec.Job.User, rec.Job.Spec.Account = old.rec.Job.User, old.rec.Job.Spec.Account // most changes keep the owner
		} else {
			rec.Job.Spec.Account = accounts[rng.Intn(len(accounts))]
		}
		j := q.job(id)
		if j == nil {
			j = &job{}
		}
		j.rec = rec
		q.track(j)
		if step%89 != 0 {
			continue
		}
		want := map[priority.Assoc]int{}
		var wantIDs []uint64
		named := map[uint64]bool{}
		for range 20 {
			named[uint64(1+rng.Intn(400))] = true
		}
		for id, j := range q.all() {
			if j.rec.Job.State == api.StatePending {
				want[priority.Assoc{User: j.rec.Job.User, Account: j.rec.Job.Spec.Account}]++
				if named[id] {
					wantIDs = append(wantIDs, id)
				}
			}
		}
		got := maps.Collect(q.pendingOwners)
		if !maps.Equal(got, want) {
			t.Fatalf("step %d: pending per owner %v, want %v", step, got, want)
		}
		entries, owners := q.pendingEntries(named)
		var gotIDs []uint64
		for _, e := range entries {
			gotIDs = append(gotIDs, e.View.ID)
		}
		slices.Sort(gotIDs)
		slices.Sort(wantIDs)
		if !slices.Equal(gotIDs, wantIDs) {
			t.Fatalf("step %d: prio entries for %v: %v, want %v", step, slices.Sorted(maps.Keys(named)), gotIDs, wantIDs)
		}
		if len(owners) != len(want) {
			t.Fatalf("step %d: %d fairshare owners, want %d (%v)", step, len(owners), len(want), owners)
		}
		for _, o := range owners {
			if want[priority.Assoc{User: o.User, Account: o.Account}] == 0 {
				t.Fatalf("step %d: owner %+v has no pending job", step, o)
			}
		}
		all, _ := q.pendingEntries(nil)
		if len(all) != q.countPending() {
			t.Fatalf("step %d: %d prio entries for every pending job, want %d", step, len(all), q.countPending())
		}
	}
}

// countPending is the brute-force count of pending jobs.
func (q *queue) countPending() int {
	n := 0
	for _, j := range q.all() {
		if j.rec.Job.State == api.StatePending {
			n++
		}
	}
	return n
}

// TestPrioNamedIDsWithArrays checks that prio for named IDs (the
// dashboard's pending rows), which looks them up instead of walking the
// queue, answers what the answer for every pending job has of them: a
// job by its ID, an array's tasks and remainder by the array's ID, a
// task with a record of its own by its ID, the remainder by its lowest
// task's ID.
func TestPrioNamedIDsWithArrays(t *testing.T) {
	tc := MustServer(t, eventsOnly) // no nodes: everything stays pending
	base := tc.submit(arraySpec(t, "arr", "0-7"))
	plain := tc.submit(script("plain"))
	for _, task := range []int{2, 5, 6} { // records of their own, still pending
		name := fmt.Sprintf("task%d", task)
		if _, err := tc.client.Update(context.Background(), api.UpdateRequest{ID: base, Task: &task, Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := tc.client.Cancel(context.Background(), api.CancelRequest{Tasks: []api.TaskRef{{JobID: base, Task: 6}}})
	if err != nil || len(resp.Errors) != 0 {
		t.Fatalf("cancel task 6: %+v, %v", resp, err)
	}
	now := time.Now()
	every := tc.srv.prio(api.PrioFilter{}, now)
	if len(every.Jobs) != 4 { // plain, tasks 2 and 5, the remainder 0-1,3-4,7
		t.Fatalf("every pending job: %+v", every.Jobs)
	}
	for _, ids := range [][]uint64{{base}, {base + 2}, {base + 5, plain}, {base + 3}, {base + 6}, {plain, base, base + 2}, {999}} {
		named := map[uint64]bool{}
		for _, id := range ids {
			named[id] = true
		}
		var want []string
		for _, p := range every.Jobs {
			array, _, _ := strings.Cut(p.Job, "_")
			if a, _ := strconv.ParseUint(array, 10, 64); named[p.JobID] || strings.Contains(p.Job, "_") && named[a] {
				want = append(want, p.Job)
			}
		}
		var got []string
		for _, p := range tc.srv.prio(api.PrioFilter{IDs: ids}, now).Jobs {
			got = append(got, p.Job)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("prio for %v: %v, want %v", ids, got, want)
		}
	}
}
