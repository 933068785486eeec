package eventq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func ev(job uint64, kind api.JobEventKind) api.JobEvent {
	return api.JobEvent{JobID: job, Node: "n1", Kind: kind, Time: time.Unix(int64(job), 0).UTC()}
}

func mustOpen(t *testing.T, dir string) *Queue {
	t.Helper()
	q, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func mustPut(t *testing.T, q *Queue, evs ...api.JobEvent) {
	t.Helper()
	for _, e := range evs {
		if err := q.Put(e); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder is a SendFunc that fails while failing is set.
type recorder struct {
	mu      sync.Mutex
	got     []api.JobEvent
	batches int
	failing bool
}

func (r *recorder) send(_ context.Context, evs []api.JobEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		return errors.New("ctld is down")
	}
	r.batches++
	r.got = append(r.got, evs...)
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *recorder) setFailing(f bool) {
	r.mu.Lock()
	r.failing = f
	r.mu.Unlock()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir)
	want := []api.JobEvent{ev(1, api.EventStarted), ev(2, api.EventStarted), ev(1, api.EventEnded)}
	mustPut(t, q, want...)
	// A half-written event from a crash is not an event.
	os.WriteFile(filepath.Join(dir, "00000000000000000099.json.tmp"), []byte("{"), 0o600)

	q2 := mustOpen(t, dir)
	if _, evs := q2.oldest(10); !reflect.DeepEqual(evs, want) {
		t.Fatalf("reopened queue holds %v, want %v", evs, want)
	}
	if got := q2.Jobs(api.EventEnded); !reflect.DeepEqual(got, []uint64{1}) {
		t.Errorf("jobs with ended events = %v", got)
	}
	if !q2.Has(2, api.EventStarted) || q2.Has(2, api.EventEnded) {
		t.Error("Has disagrees with the queue")
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000099.json.tmp")); !os.IsNotExist(err) {
		t.Error("temporary file left in place")
	}
	mustPut(t, q2, ev(3, api.EventStarted)) // continues the sequence
	if _, evs := q2.oldest(10); len(evs) != 4 || evs[3].JobID != 3 {
		t.Errorf("after a Put on the reopened queue: %v", evs)
	}
}

func TestRunDeliversInOrderAcrossAnOutage(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir)
	rec := &recorder{failing: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx, rec.send, t.Logf); close(done) }()
	defer func() { cancel(); <-done }()

	var want []api.JobEvent
	for i := uint64(1); i <= 300; i++ {
		want = append(want, ev(i, api.EventEnded))
	}
	mustPut(t, q, want...)
	time.Sleep(100 * time.Millisecond) // a few failed attempts
	if rec.count() != 0 || q.Len() != 300 {
		t.Fatalf("delivered %d while ctld was down; queue %d", rec.count(), q.Len())
	}
	rec.setFailing(false)
	eventually(t, "delivery after ctld came back", func() bool { return q.Len() == 0 })
	if !reflect.DeepEqual(rec.got, want) {
		t.Fatalf("delivered %d events, out of order or changed", len(rec.got))
	}
	if rec.batches < 2 {
		t.Errorf("300 events in %d batch(es), want batches of at most %d", rec.batches, MaxBatch)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left after acknowledgement", len(ents))
	}
}

// TestPutWakesIdleSender: an idle sender has no timer running, so only the
// wake-up can deliver this event.
func TestPutWakesIdleSender(t *testing.T) {
	q := mustOpen(t, t.TempDir())
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx, rec.send, t.Logf); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(20 * time.Millisecond)
	mustPut(t, q, ev(7, api.EventEnded))
	eventually(t, "the woken sender", func() bool { return rec.count() == 1 })
}
