package web

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Live updates: the controller calls Dashboard.Changed after every change
// to its jobs (a submit, a commit); a signed-in page listens on /events
// (server-sent events) and re-reads itself when told. A browser waiting
// costs a parked goroutine, nothing per second.

// coalesce gathers a burst of changes (a cycle starting many jobs) into
// one event.
const coalesce = 200 * time.Millisecond

// keepAlive is how often an idle event stream sends a comment, so that
// proxies do not close it.
const keepAlive = 30 * time.Second

// changes is a version that moves with the controller's jobs.
type changes struct {
	mu      sync.Mutex
	version uint64
	moved   chan struct{} // closed when version moves
}

func newChanges() *changes { return &changes{moved: make(chan struct{})} }

func (c *changes) bump() {
	c.mu.Lock()
	c.version++
	close(c.moved)
	c.moved = make(chan struct{})
	c.mu.Unlock()
}

// current is the version and the channel that closes when it moves.
func (c *changes) current() (uint64, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, c.moved
}

// Changed tells the dashboard that the controller's jobs changed.
func (d *Dashboard) Changed() { d.live.bump() }

// events streams "changed" events to a signed-in page until it goes.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request, _ *session, _ string) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	_, moved := d.live.current()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": still here\n\n")
		case <-moved:
			if !sleep(r.Context(), coalesce) {
				return
			}
			var version uint64
			version, moved = d.live.current()
			fmt.Fprintf(w, "event: changed\ndata: %d\n\n", version)
		}
		fl.Flush()
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
