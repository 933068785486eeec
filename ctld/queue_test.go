package ctld

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
)

// queueFixture is a queue on a store of its own, without a Server: one
// plain job and one array job with tasks 1, 3, 5 and 7, all pending.
type queueFixture struct {
	t     *testing.T
	q     *queue
	path  string
	plain uint64
	base  uint64
	ends  int // commits that ended something (queue.ended calls)
}

func newQueueFixture(t *testing.T) *queueFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &queueFixture{t: t, q: newQueue(), path: path}
	f.q.store, f.q.observe = st, func(change) {}
	f.q.ended = func() { f.ends++ }
	var mu sync.Mutex
	f.plain = f.submit(&mu, nil)
	f.base = f.submit(&mu, &api.JobArray{Ranges: []api.ArrayRange{{First: 1, Last: 7, Step: 2}}})
	return f
}

func (f *queueFixture) submit(mu sync.Locker, arr *api.JobArray) uint64 {
	f.t.Helper()
	spec := api.JobSpec{Name: "q", Script: "#!/bin/sh\ntrue\n", Partition: "batch", Array: arr}
	rec := &store.JobRecord{Job: api.Job{Name: "q", User: "alice", Partition: "batch", State: api.StatePending, Spec: spec}}
	id, err := f.q.submit(rec, mu)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// cancel commits the cancel of what resolve gives for ref.
func (f *queueFixture) cancel(ref jobRef) (ended bool, err error) {
	f.t.Helper()
	jobs, _, msg := f.q.resolve(ref)
	if msg != "" || len(jobs) != 1 {
		f.t.Fatalf("resolve %s: %d jobs, %q", ref, len(jobs), msg)
	}
	next, err := step(jobs[0].rec, lifecycle.Event{Kind: lifecycle.Cancel}, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	ends := f.ends
	err = f.q.commit([]change{{jobs[0], next}}, nil)
	return f.ends > ends, err
}

// stored is the remainder of the array as the store has it, nil if none.
func (f *queueFixture) stored() *store.ArrayRecord {
	f.t.Helper()
	rems, err := f.q.store.Arrays()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range rems {
		if r.Job.ID == f.base {
			return r
		}
	}
	return nil
}

// TestQueueResolve: every form of reference resolves without a Server;
// a pending task comes back as a job of its own that is not installed.
func TestQueueResolve(t *testing.T) {
	f := newQueueFixture(t)
	task := func(i int) *int { return &i }
	for _, tc := range []struct {
		name string
		ref  jobRef
		id   uint64 // of the one job resolved; 0: none
		rem  bool   // the array's remainder comes back
		msg  string // a part of the refusal
	}{
		{"plain job", jobRef{id: f.plain}, f.plain, false, ""},
		{"array", jobRef{id: f.base}, 0, true, ""},
		{"task A_T", jobRef{id: f.base, task: task(5)}, f.base + 2, false, ""},
		{"task by its own ID", jobRef{id: f.base + 3}, f.base + 3, false, ""},
		{"no such task", jobRef{id: f.base, task: task(4)}, 0, false, "has no task 4"},
		{"task of a plain job", jobRef{id: f.plain, task: task(1)}, 0, false, "is not an array job"},
		{"nothing", jobRef{id: 999}, 0, false, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, rem, msg := f.q.resolve(tc.ref)
			if tc.msg != "" {
				if !strings.Contains(msg, tc.msg) {
					t.Fatalf("refusal %q, want one with %q", msg, tc.msg)
				}
				return
			}
			if msg != "" || (rem != nil) != tc.rem {
				t.Fatalf("refusal %q, remainder %v", msg, rem != nil)
			}
			if tc.id == 0 {
				if len(jobs) != 0 {
					t.Fatalf("%d jobs, want none (no task has a job of its own)", len(jobs))
				}
				return
			}
			if len(jobs) != 1 || jobs[0].rec.Job.ID != tc.id {
				t.Fatalf("jobs %v, want job %d", jobs, tc.id)
			}
			if tc.id != f.plain && f.q.job(tc.id) != nil {
				t.Errorf("resolving task %d installed it", tc.id)
			}
		})
	}
}

// TestQueueCommitTakesTasksOutOfTheRemainder: a task's first change
// gives it a record of its own and takes it out of the remainder, on disk
// and in memory in one commit; the last one deletes the remainder.
func TestQueueCommitTakesTasksOutOfTheRemainder(t *testing.T) {
	f := newQueueFixture(t)
	a := f.q.array(f.base)
	for _, tc := range []struct {
		task int
		left []int // pending indexes after its cancel
	}{{3, []int{1, 5, 7}}, {1, []int{5, 7}}, {7, []int{5}}, {5, nil}} {
		ended, err := f.cancel(jobRef{id: f.base, task: &tc.task})
		if err != nil || !ended {
			t.Fatalf("cancel task %d: ended %v, %v", tc.task, ended, err)
		}
		id, _ := a.idOf(tc.task)
		if j := f.q.job(id); j == nil || j.state() != api.StateCancelled || j.fromArray != nil {
			t.Fatalf("task %d after its commit: %+v", tc.task, j)
		}
		if got := a.firstPending(10); !slices.Equal(got, tc.left) {
			t.Errorf("after task %d: pending %v, want %v", tc.task, got, tc.left)
		}
		rec := f.stored()
		switch {
		case tc.left == nil && (rec != nil || a.remJob() != nil):
			t.Errorf("the last task left a remainder: stored %v", rec != nil)
		case tc.left != nil && (rec == nil || countRanges(rec.Pending) != len(tc.left)):
			t.Errorf("after task %d the stored remainder is %+v", tc.task, rec)
		}
	}
	if _, unfinished := f.q.size(); unfinished != 1 {
		t.Errorf("%d unfinished jobs, want the plain one", unfinished)
	}
}

// TestQueueCommitFailsWhole: a commit the store refuses changes nothing
// in memory: the task stays in the remainder, without a job of its own.
func TestQueueCommitFailsWhole(t *testing.T) {
	f := newQueueFixture(t)
	f.q.store.Close()
	task := 3
	if _, err := f.cancel(jobRef{id: f.base, task: &task}); err == nil {
		t.Fatal("a commit to a closed store succeeded")
	}
	a := f.q.array(f.base)
	if id, _ := a.idOf(task); f.q.job(id) != nil || !slices.Contains(a.firstPending(10), task) {
		t.Errorf("a refused commit changed the queue: job %v, pending %v", f.q.job(id), a.firstPending(10))
	}
}

// TestQueueLoad: a queue loaded from the store has what the one that
// wrote it had: the array with its remainder and its tasks' jobs.
func TestQueueLoad(t *testing.T) {
	f := newQueueFixture(t)
	task := 5
	if _, err := f.cancel(jobRef{id: f.base, task: &task}); err != nil {
		t.Fatal(err)
	}
	loaded := newQueue()
	loaded.store = f.q.store
	if err := loaded.load(); err != nil {
		t.Fatal(err)
	}
	a := loaded.array(f.base)
	if a == nil || !slices.Equal(a.firstPending(10), []int{1, 3, 7}) || a.live != 0 {
		t.Fatalf("loaded array: %+v", a)
	}
	if j := loaded.job(f.base + 2); j == nil || j.state() != api.StateCancelled {
		t.Errorf("loaded task 5: %+v", j)
	}
	if jobs, unfinished := loaded.size(); jobs != 2 || unfinished != 1 {
		t.Errorf("loaded %d jobs, %d unfinished; want 2 and 1", jobs, unfinished)
	}
}

// TestQueueRunningIndex: the running jobs the queue walks for the cycle's
// charge and allocation are exactly its jobs in RUNNING, through starts,
// an array task's first change, requeues, ends and a reload.
func TestQueueRunningIndex(t *testing.T) {
	f := newQueueFixture(t)
	apply := func(id uint64, ev lifecycle.Event) {
		t.Helper()
		j := f.q.job(id)
		if j == nil {
			j = f.q.pendingJob(id)
		}
		next, err := step(j.rec, ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := f.q.commit([]change{{j, next}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(q *queue, want ...uint64) {
		t.Helper()
		var got, inState []uint64
		for id := range q.runningJobs() {
			got = append(got, id)
		}
		for id, j := range q.all() {
			if j.state() == api.StateRunning {
				inState = append(inState, id)
			}
		}
		slices.Sort(got)
		slices.Sort(inState)
		if !slices.Equal(got, want) || !slices.Equal(inState, want) {
			t.Fatalf("running index %v, jobs in RUNNING %v, want %v", got, inState, want)
		}
		if _, held := q.allocation()["n1"]; held != (len(want) > 0) {
			t.Fatalf("n1 in the allocation: %v, with %v running", held, want)
		}
	}
	start := lifecycle.Event{Kind: lifecycle.Start, Nodes: []string{"n1"}}
	task3 := f.base + 1 // tasks 1, 3, 5, 7: the second ID is task 3
	check(f.q)
	apply(f.plain, start)
	apply(task3, start)
	check(f.q, f.plain, task3)
	apply(task3, lifecycle.Event{Kind: lifecycle.Requeue})
	check(f.q, f.plain)
	apply(task3, start)
	apply(f.plain, lifecycle.Event{Kind: lifecycle.End, State: api.StateCompleted})
	check(f.q, task3)

	loaded := newQueue()
	loaded.store = f.q.store
	if err := loaded.load(); err != nil {
		t.Fatal(err)
	}
	check(loaded, task3)
}
