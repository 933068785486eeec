package store

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	bolt "go.etcd.io/bbolt"
)

// MustOpen opens a store at path (a fresh temp file when path is "").
func MustOpen(t testing.TB, path string) *Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), FileName)
	}
	s, err := Open(path, Options{OpenTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// MustReopen closes s and opens its file again, as a restart does.
func MustReopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return MustOpen(t, s.Path())
}

func newRecord(name string, at time.Time) *JobRecord {
	return &JobRecord{
		Job: api.Job{Name: name, User: "alice", UID: 1000, State: api.StatePending, SubmitTime: at,
			Spec:    api.JobSpec{Name: name, Script: "#!/bin/sh\necho " + name + "\n", CPUs: 1, WorkDir: "/tmp"},
			History: []api.Transition{{State: api.StatePending, Time: at}}},
		Home: "/home/alice",
	}
}

func mustAdd(t testing.TB, s *Store, rec *JobRecord) uint64 {
	t.Helper()
	id, err := s.AddJob(rec)
	if err != nil {
		t.Fatalf("AddJob: %v", err)
	}
	return id
}

func mustJobs(t testing.TB, s *Store) []*JobRecord {
	t.Helper()
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	return jobs
}

func TestSubmitSurvivesReopen(t *testing.T) {
	s := MustOpen(t, "")
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var want []*JobRecord
	for i := 0; i < 5; i++ {
		rec := newRecord(fmt.Sprintf("job%d", i), at)
		if id := mustAdd(t, s, rec); id != uint64(i+1) {
			t.Fatalf("job %d got ID %d, want %d", i, id, i+1)
		}
		want = append(want, rec)
	}
	// A transition: job 2 starts, persisted with its time in History.
	start := at.Add(time.Minute)
	want[1].Job.State = api.StateRunning
	want[1].Job.StartTime = &start
	want[1].Job.Nodes = []string{"n1"}
	want[1].Job.History = append(want[1].Job.History, api.Transition{State: api.StateRunning, Time: start})
	if err := s.PutJobs(want[1]); err != nil {
		t.Fatal(err)
	}
	s = MustReopen(t, s)
	defer s.Close()
	got := mustJobs(t, s)
	if len(got) != len(want) {
		t.Fatalf("after reopen %d jobs, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("job %d after reopen:\n got %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
	if h := got[1].Job.History; len(h) != 2 || h[1].State != api.StateRunning || !h[1].Time.Equal(start) {
		t.Errorf("history of job 2 = %+v", h)
	}
}

func TestIDsNeverRepeatAcrossRestarts(t *testing.T) {
	s := MustOpen(t, "")
	var last uint64
	for round := 0; round < 3; round++ {
		for i := 0; i < 4; i++ {
			id := mustAdd(t, s, newRecord("x", time.Now()))
			if id != last+1 {
				t.Fatalf("round %d: ID %d after %d", round, id, last)
			}
			last = id
		}
		if n, err := s.LastJobID(); err != nil || n != last {
			t.Fatalf("LastJobID = %d, %v; want %d", n, err, last)
		}
		s = MustReopen(t, s)
	}
	s.Close()
}

func TestConcurrentSubmitsStoredExactlyOnce(t *testing.T) {
	s := MustOpen(t, "")
	const goroutines, each = 48, 25
	ids := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id, err := s.AddJob(newRecord(fmt.Sprintf("g%d-%d", g, i), time.Now()))
				if err != nil {
					t.Error(err)
					return
				}
				ids[g] = append(ids[g], id)
			}
		}(g)
	}
	wg.Wait()
	s = MustReopen(t, s)
	defer s.Close()
	byID := make(map[uint64]string)
	for _, rec := range mustJobs(t, s) {
		byID[rec.Job.ID] = rec.Job.Name
	}
	if len(byID) != goroutines*each {
		t.Fatalf("%d jobs stored, want %d", len(byID), goroutines*each)
	}
	seen := make(map[string]bool)
	for g := range ids {
		for i, id := range ids[g] {
			want := fmt.Sprintf("g%d-%d", g, i)
			if byID[id] != want {
				t.Errorf("ID %d holds %q, want %q", id, byID[id], want)
			}
			if seen[want] {
				t.Errorf("%s stored twice", want)
			}
			seen[want] = true
		}
	}
	for id := uint64(1); id <= goroutines*each; id++ {
		if _, ok := byID[id]; !ok {
			t.Errorf("ID %d missing: IDs are not dense", id)
		}
	}
}

func TestPutJobsIsAllOrNothing(t *testing.T) {
	s := MustOpen(t, "")
	defer s.Close()
	rec := newRecord("a", time.Now())
	mustAdd(t, s, rec)
	changed := *rec
	changed.Job.State = api.StateCancelled
	ghost := newRecord("ghost", time.Now())
	ghost.Job.ID = 99
	err := s.PutJobs(&changed, ghost)
	if err == nil || !strings.Contains(err.Error(), "job 99 is not in the store") {
		t.Fatalf("PutJobs with unknown job: %v", err)
	}
	if got := mustJobs(t, s); got[0].Job.State != api.StatePending {
		t.Fatalf("job 1 changed by a failed PutJobs: %s", got[0].Job.State)
	}
	zero := newRecord("z", time.Now())
	if err := s.PutJobs(zero); err == nil {
		t.Fatal("PutJobs with ID 0 succeeded")
	}
}

func TestNodes(t *testing.T) {
	s := MustOpen(t, "")
	seen := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	in := []NodeRecord{
		{Name: "n2", Addr: "10.0.0.2:6818", CPUs: 8, MemBytes: 16 << 30, LastSeen: seen},
		{Name: "n1", Addr: "10.0.0.1:6818", CPUs: 4, MemBytes: 8 << 30, BootID: "b1", LastSeen: seen},
	}
	if err := s.PutNodes(in...); err != nil {
		t.Fatal(err)
	}
	in[0].CPUs = 16 // replace
	if err := s.PutNodes(in[0]); err != nil {
		t.Fatal(err)
	}
	s = MustReopen(t, s)
	defer s.Close()
	got, err := s.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeRecord{in[1], in[0]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Nodes = %+v, want %+v", got, want)
	}
}

func TestOpenErrors(t *testing.T) {
	s := MustOpen(t, "")
	defer s.Close()
	// A second opener (another controller) gets a clear error, not a hang.
	_, err := Open(s.Path(), Options{OpenTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second Open error = %v", err)
	}

	newer := filepath.Join(t.TempDir(), FileName)
	db, err := bolt.Open(newer, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists(bucketMeta)
		return b.Put(keySchema, []byte("99"))
	})
	db.Close()
	if _, err := Open(newer, Options{}); err == nil || !strings.Contains(err.Error(), "schema version") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestCloseDuringSubmits(t *testing.T) {
	s := MustOpen(t, "")
	path := s.Path()
	type result struct {
		id  uint64
		err error
	}
	results := make(chan result, 400)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id, err := s.AddJob(newRecord("c", time.Now()))
				results <- result{id, err}
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait() // no AddJob may hang on a closed store
	close(results)
	s = MustOpen(t, path)
	defer s.Close()
	stored := make(map[uint64]bool)
	for _, rec := range mustJobs(t, s) {
		stored[rec.Job.ID] = true
	}
	acked := 0
	for r := range results {
		switch {
		case r.err == nil:
			acked++
			if !stored[r.id] {
				t.Errorf("acknowledged job %d is not stored", r.id)
			}
		case !strings.Contains(r.err.Error(), "store is closed"):
			t.Errorf("AddJob error = %v", r.err)
		}
	}
	if acked != len(stored) {
		t.Errorf("%d acknowledged, %d stored", acked, len(stored))
	}
}

// A job's COMPLETING flag is the controller's view while its parts stop
// (api.Job.Completing): it is never written, so a restarted controller
// does not show a job CG that no node still runs.
func TestCompletingIsNeverStored(t *testing.T) {
	s := MustOpen(t, "")
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := newRecord("cg", at)
	mustAdd(t, s, rec)
	rec.Job.State, rec.Job.Completing, rec.Job.CompletingNodes = api.StateCompleted, true, []string{"n2"}
	if err := s.PutJobs(rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Job.Completing {
		t.Fatal("PutJobs cleared the caller's flag")
	}
	s = MustReopen(t, s)
	defer s.Close()
	got := mustJobs(t, s)
	if len(got) != 1 || got[0].Job.State != api.StateCompleted || got[0].Job.Completing || got[0].Job.CompletingNodes != nil {
		t.Fatalf("stored job: %+v", got[0].Job)
	}
}
