package eventq

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/corral-hpc/corral/internal/fsutil"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
)

// MaxBatch bounds the events sent in one request.
const MaxBatch = 256

// Backoff bounds for retries while ctld is unreachable.
const (
	MinBackoff = 50 * time.Millisecond
	MaxBackoff = 5 * time.Second
)

// Queue is an on-disk FIFO of job events.
type Queue struct {
	dir  string
	wake chan struct{}
	// putMu serialises Put so sequence numbers reach the index in order.
	putMu sync.Mutex

	mu      sync.Mutex
	nextSeq uint64
	items   map[uint64]api.JobEvent // by sequence number
}

// Open loads the queue in dir, creating dir if needed.
func Open(dir string) (*Queue, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	q := &Queue{dir: dir, wake: make(chan struct{}, 1), items: map[uint64]api.JobEvent{}, nextSeq: 1}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			_ = os.Remove(filepath.Join(dir, name)) // never renamed: never accepted
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, ".json"), 10, 64)
		if err != nil || !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var ev api.JobEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			return nil, fmt.Errorf("event file %s: %w", filepath.Join(dir, name), err)
		}
		q.items[seq] = ev
		if seq >= q.nextSeq {
			q.nextSeq = seq + 1
		}
	}
	return q, nil
}

func (q *Queue) path(seq uint64) string {
	return filepath.Join(q.dir, fmt.Sprintf("%020d.json", seq))
}

// Put stores ev durably and wakes the sender.
func (q *Queue) Put(ev api.JobEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	q.putMu.Lock()
	defer q.putMu.Unlock()
	q.mu.Lock()
	seq := q.nextSeq
	q.nextSeq++
	q.mu.Unlock()
	if err := writeDurably(q.path(seq), b); err != nil {
		return err
	}
	q.mu.Lock()
	q.items[seq] = ev
	q.mu.Unlock()
	q.Poke()
	return nil
}

func writeDurably(path string, data []byte) error {
	return fsutil.WriteFileAtomic(path, data, 0o600)
}

// Len is the number of unacknowledged events.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Jobs lists the jobs with an unacknowledged event of the given kind.
func (q *Queue) Jobs(kind api.JobEventKind) []uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	seen := map[uint64]bool{}
	var out []uint64
	for _, ev := range q.items {
		if ev.Kind == kind && !seen[ev.JobID] {
			seen[ev.JobID] = true
			out = append(out, ev.JobID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Select returns the queued events of a kind, oldest first.
func (q *Queue) Select(kind api.JobEventKind) []api.JobEvent {
	_, evs := q.oldest(q.Len())
	out := evs[:0]
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// Has reports whether an event of kind for job is still queued.
func (q *Queue) Has(job uint64, kind api.JobEventKind) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, ev := range q.items {
		if ev.JobID == job && ev.Kind == kind {
			return true
		}
	}
	return false
}

// oldest returns up to n queued events, oldest first.
func (q *Queue) oldest(n int) ([]uint64, []api.JobEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	seqs := make([]uint64, 0, len(q.items))
	for s := range q.items {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	if len(seqs) > n {
		seqs = seqs[:n]
	}
	evs := make([]api.JobEvent, len(seqs))
	for i, s := range seqs {
		evs[i] = q.items[s]
	}
	return seqs, evs
}

// ack deletes delivered events.
func (q *Queue) ack(seqs []uint64) error {
	var first error
	for _, s := range seqs {
		if err := os.Remove(q.path(s)); err != nil && !os.IsNotExist(err) && first == nil {
			first = err
		}
		q.mu.Lock()
		delete(q.items, s)
		q.mu.Unlock()
	}
	return first
}

// SendFunc delivers a batch; nil means ctld acknowledged all of it.
type SendFunc func(context.Context, []api.JobEvent) error

// Run delivers events until ctx ends. logf reports failures (once per
// outage, then again when delivery recovers).
func (q *Queue) Run(ctx context.Context, send SendFunc, logf func(format string, a ...any)) {
	backoff := MinBackoff
	failing := false
	for {
		seqs, evs := q.oldest(MaxBatch)
		if len(evs) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		err := send(ctx, evs)
		if err == nil {
			if aerr := q.ack(seqs); aerr != nil {
				logf("events delivered but not removed from %s: %v", q.dir, aerr)
			}
			if failing {
				logf("events: delivering again (%d sent)", len(evs))
			}
			failing, backoff = false, MinBackoff
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if !failing {
			logf("events: cannot deliver %d event(s), will retry: %v", q.Len(), err)
			failing = true
		}
		// Only timer-driven retries back off further: a burst of new
		// events while ctld is down must not push the next retry far out.
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-q.wake:
			t.Stop()
		case <-t.C:
			if backoff *= 2; backoff > MaxBackoff {
				backoff = MaxBackoff
			}
		}
	}
}

// Poke makes the sender retry now, e.g. when ctld is known to be back.
func (q *Queue) Poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
