package store

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	bolt "go.etcd.io/bbolt"
)

func newStep(job uint64, id int, state api.JobState, at time.Time) *StepRecord {
	return &StepRecord{
		Step: api.Step{JobID: job, StepID: id, Name: "hostname", State: state, Nodes: []string{"n1"},
			Tasks: 2, TasksPerNode: []int{2}, CPUsPerTask: 1, Start: at},
		Layout: []api.StepNode{{Node: "n1", Addr: "https://n1:1", Ranks: []int{0, 1}, CPUs: 2}},
	}
}

func stepIDs(recs []*StepRecord) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.Step.StepID)
	}
	return out
}

func mustSteps(t *testing.T, s *Store, job uint64) []*StepRecord {
	t.Helper()
	recs, err := s.Steps(job)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Steps are filed under their job in step order (batch and extern
// first, then 0, 1, ... numerically), the next ID comes from what is
// stored, and only unended steps are read back as running, across a
// restart.
func TestStepRecords(t *testing.T) {
	s := MustOpen(t, "")
	now := time.Now()
	j1 := mustAdd(t, s, newRecord("a", now))
	j2 := mustAdd(t, s, newRecord("b", now))
	if last, err := s.LastStepID(j1); err != nil || last != -1 {
		t.Fatalf("LastStepID before any step = %d, %v", last, err)
	}
	var recs []*StepRecord
	for _, id := range []int{10, 2, 0, 1, api.StepBatch, api.StepExtern} {
		recs = append(recs, newStep(j1, id, api.StateRunning, now))
	}
	recs = append(recs, newStep(j2, api.StepBatch, api.StateRunning, now))
	if err := s.PutSteps(recs...); err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(mustSteps(t, s, j1)), []int{api.StepBatch, api.StepExtern, 0, 1, 2, 10}; !slices.Equal(got, want) {
		t.Fatalf("steps of job %d = %v, want %v", j1, got, want)
	}
	if last, _ := s.LastStepID(j1); last != 10 {
		t.Fatalf("LastStepID = %d, want 10", last)
	}
	// Job 2 is the last key of the bucket; it has no user step.
	if last, _ := s.LastStepID(j2); last != -1 {
		t.Fatalf("LastStepID of a job with only its batch step = %d, want -1", last)
	}
	if last, _ := s.LastStepID(j2 + 5); last != -1 {
		t.Fatalf("LastStepID of an unknown job = %d", last)
	}

	ended := newStep(j1, 2, api.StateCompleted, now)
	end := now.Add(time.Second)
	ended.Step.End, ended.Step.ExitCode = &end, 0
	ended.Reports = []StepNodeEnd{{Node: "n1", CPUTimeUsec: 5}}
	if err := s.PutSteps(ended); err != nil {
		t.Fatal(err)
	}

	s = MustReopen(t, s)
	defer s.Close()
	running, err := s.RunningSteps()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepIDs(running), []int{api.StepBatch, api.StepExtern, 0, 1, 10, api.StepBatch}; !slices.Equal(got, want) {
		t.Fatalf("running steps after restart = %v, want %v", got, want)
	}
	if running[5].Step.JobID != j2 {
		t.Fatalf("last running step belongs to job %d, want %d", running[5].Step.JobID, j2)
	}
	got := mustSteps(t, s, j1)[4]
	if got.Step.State != api.StateCompleted || got.Step.End == nil || len(got.Reports) != 1 || got.Reports[0].CPUTimeUsec != 5 || got.Layout[0].CPUs != 2 {
		t.Fatalf("ended step read back as %+v", got)
	}
}

// A job's end and its steps' ends are one transaction: all of it or
// nothing; deleting a job deletes its steps.
func TestStepsCommitWithTheirJob(t *testing.T) {
	s := MustOpen(t, "")
	now := time.Now()
	id := mustAdd(t, s, newRecord("a", now))
	other := mustAdd(t, s, newRecord("b", now))
	if err := s.PutSteps(newStep(id, 0, api.StateRunning, now), newStep(other, 0, api.StateRunning, now)); err != nil {
		t.Fatal(err)
	}

	job := newRecord("a", now)
	job.Job.ID, job.Job.State = id, api.StateCancelled
	step := newStep(id, 0, api.StateCancelled, now)
	ghost := newStep(other+100, 0, api.StateRunning, now)
	if err := s.Apply(Update{Jobs: []*JobRecord{job}, Steps: []*StepRecord{step, ghost}}); err == nil {
		t.Fatal("a step of a job that is not stored was written")
	}
	if jobs := mustJobs(t, s); jobs[0].Job.State != api.StatePending {
		t.Fatalf("a failed update changed job %d to %s", id, jobs[0].Job.State)
	}
	if st := mustSteps(t, s, id)[0].Step.State; st != api.StateRunning {
		t.Fatalf("a failed update changed step %d.0 to %s", id, st)
	}

	if err := s.Apply(Update{Jobs: []*JobRecord{job}, Steps: []*StepRecord{step}}); err != nil {
		t.Fatal(err)
	}
	running, _ := s.RunningSteps()
	if len(running) != 1 || running[0].Step.JobID != other {
		t.Fatalf("running steps after job %d ended: %+v", id, running)
	}
	if err := s.Apply(Update{DeleteJobs: []uint64{id, other}}); err != nil {
		t.Fatal(err)
	}
	if recs := mustSteps(t, s, id); len(recs) != 0 {
		t.Fatalf("steps of a deleted job remain: %+v", recs)
	}
	if running, _ := s.RunningSteps(); len(running) != 0 {
		t.Fatalf("running steps of a deleted job remain: %+v", running)
	}
	if err := s.PutSteps(&StepRecord{Step: api.Step{StepID: 1}}); err == nil {
		t.Fatal("a step of job 0 was written")
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(path); err != nil || rep.Steps != 0 {
		t.Fatalf("Check after deleting every step = %+v, %v", rep, err)
	}
}

// Check counts steps and refuses a file whose steps cannot be read or
// whose running index disagrees with them (a running step missing from
// it would never be loaded, so never end).
func TestCheckCoversSteps(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   string
	}{
		{"sound", nil, ""},
		{"step record that is not JSON", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketSteps).Put(stepKey(1, 0), []byte("{half"))
		}, "step 1.0"},
		{"step key that is not a job and step ID", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketSteps).Put([]byte("short"), []byte("{}"))
		}, "is not a job and step ID"},
		{"running step not indexed", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStepsRunning).Delete(stepKey(1, 0))
		}, "running index disagrees"},
		{"ended step indexed", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStepsRunning).Put(stepKey(1, 1), nil)
		}, "running index disagrees"},
		{"index entry without a record", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStepsRunning).Put(stepKey(1, 7), nil)
		}, "has no step record"},
		{"step of no stored job", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketSteps).Put(stepKey(99, 0), []byte(`{"step":{"state":"COMPLETED"}}`))
		}, "belongs to no stored job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustOpen(t, "")
			now := time.Now()
			id := mustAdd(t, s, newRecord("a", now))
			if err := s.PutSteps(newStep(id, 0, api.StateRunning, now), newStep(id, 1, api.StateCompleted, now)); err != nil {
				t.Fatal(err)
			}
			path := s.Path()
			if tt.damage != nil {
				if err := s.db.Update(tt.damage); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Check(path)
			if tt.want == "" {
				if err != nil || rep.Steps != 2 || rep.Jobs != 1 {
					t.Fatalf("Check = %+v, %v; want 1 job and 2 steps", rep, err)
				}
				return
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Check = %v, want one line wrapping ErrDamaged about %q", err, tt.want)
			}
		})
	}
}
