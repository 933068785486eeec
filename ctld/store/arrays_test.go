package store

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// An array is one record that reserves an ID per task; tasks are written
// as job records only within that reservation; all of it survives a
// restart, and an update is all or nothing.
func TestArrayRecords(t *testing.T) {
	s := MustOpen(t, "")
	now := time.Now()
	first := mustAdd(t, s, newRecord("before", now))
	rec := &ArrayRecord{Job: newRecord("arr", now).Job, Home: "/home/alice", Tasks: 10000,
		Pending: []api.ArrayRange{{First: 0, Last: 9999, Step: 1}}}
	base, err := s.AddArray(rec)
	if err != nil || base != first+1 || rec.Job.ID != base {
		t.Fatalf("AddArray = %d, %v; want %d", base, err, first+1)
	}
	if next := mustAdd(t, s, newRecord("after", now)); next != base+10000 {
		t.Fatalf("next job ID %d, want %d", next, base+10000)
	}
	if _, err := s.AddArray(&ArrayRecord{Job: rec.Job}); err == nil {
		t.Fatal("an array of no tasks was stored")
	}

	task := newRecord("arr", now)
	task.Job.ID, task.Job.ArrayJobID = base+3, base
	rest := *rec
	rest.Pending = []api.ArrayRange{{First: 0, Last: 2, Step: 1}, {First: 4, Last: 9999, Step: 1}}
	if err := s.Apply(Update{Jobs: []*JobRecord{task}, Arrays: []*ArrayRecord{&rest}}); err != nil {
		t.Fatal(err)
	}
	// Outside any reservation, or an array that is not stored: nothing.
	stray := newRecord("stray", now)
	stray.Job.ID = base + 20000
	err = s.Apply(Update{Jobs: []*JobRecord{task, stray}, DeleteArrays: []uint64{base}})
	if err == nil || !strings.Contains(err.Error(), "was never submitted") {
		t.Fatalf("Apply with a stray job: %v", err)
	}
	ghost := rest
	ghost.Job.ID = base + 1
	if err := s.Apply(Update{Arrays: []*ArrayRecord{&ghost}}); err == nil {
		t.Fatal("an array that was never stored was written")
	}

	s = MustReopen(t, s)
	arrays, err := s.Arrays()
	if err != nil || len(arrays) != 1 || arrays[0].Job.ID != base || arrays[0].Tasks != 10000 || len(arrays[0].Pending) != 2 {
		t.Fatalf("Arrays after restart = %+v, %v", arrays, err)
	}
	jobs, _ := s.Jobs()
	if len(jobs) != 3 || jobs[1].Job.ID != base+3 || jobs[1].Job.ArrayJobID != base {
		t.Fatalf("jobs after restart: %d, %+v", len(jobs), jobs)
	}
	if err := s.Apply(Update{DeleteArrays: []uint64{base}, DeleteJobs: []uint64{first}}); err != nil {
		t.Fatal(err)
	}
	if arrays, _ := s.Arrays(); len(arrays) != 0 {
		t.Fatalf("deleted array still stored: %+v", arrays)
	}
	if jobs, _ := s.Jobs(); len(jobs) != 2 {
		t.Fatalf("%d jobs after deleting one, want 2", len(jobs))
	}
	s.Close()
}
