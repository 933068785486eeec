package ctld

import (
	"context"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
)

// allocHistory is the controller's recent allocation, for the
// dashboard's admin chart: one sample every period, the newest capacity
// of them in a ring (a day at one a minute), in memory only. Sampling
// reads what `corral nodes` reads; nothing else waits for it.
type allocHistory struct {
	every time.Duration

	mu   sync.Mutex // a leaf
	ring []api.AllocSample
	next int  // where the next sample goes
	full bool // the ring has wrapped
}

// Sampling defaults: one a minute for a day.
const (
	DefaultAllocSampleEvery = time.Minute
	allocHistorySamples     = 24 * 60
)

func newAllocHistory(every time.Duration, capacity int) *allocHistory {
	if every <= 0 {
		every = DefaultAllocSampleEvery
	}
	return &allocHistory{every: every, ring: make([]api.AllocSample, capacity)}
}

// add keeps s, dropping the oldest sample once the ring is full.
func (h *allocHistory) add(s api.AllocSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ring[h.next] = s
	h.next = (h.next + 1) % len(h.ring)
	h.full = h.full || h.next == 0
}

// history is the samples, oldest first.
func (h *allocHistory) history() api.AllocHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := api.AllocHistory{EveryS: int64(h.every / time.Second)}
	if h.full {
		out.Samples = append(out.Samples, h.ring[h.next:]...)
	}
	out.Samples = append(out.Samples, h.ring[:h.next]...)
	if out.Samples == nil {
		out.Samples = []api.AllocSample{}
	}
	return out
}

// run takes a sample now and then every period until ctx ends.
func (h *allocHistory) run(ctx context.Context, take func(time.Time) api.AllocSample) {
	t := time.NewTicker(h.every)
	defer t.Stop()
	h.add(take(time.Now()))
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.add(take(now))
		}
	}
}

// allocSample sums the nodes as listings show them.
func allocSample(nodes []api.Node, now time.Time) api.AllocSample {
	s := api.AllocSample{Time: now}
	for _, n := range nodes {
		s.AllocCPUs += n.AllocCPUs
		s.CPUs += n.CPUs
		s.AllocMemBytes += n.AllocMemBytes
		s.MemBytes += n.MemBytes
		s.AllocFGPUHundredths += n.AllocFGPUHundredths
		s.FGPUHundredths += n.FGPUHundredths
	}
	return s
}
