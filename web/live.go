package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Live updates: the controller calls Dashboard.Changed after every
// change to its jobs (a submit, a commit: one call however many jobs it
// changed); a signed-in page listens on /events (server-sent events) and
// re-reads itself when told. A burst of changes is published once, a
// coalescing period after its first: one timer for the dashboard, none
// per page. A page waiting costs a parked goroutine and a keep-alive
// timer that fires every 30 s, nothing else.

// coalesce gathers a burst of changes (a cycle starting many jobs, a
// user's script submitting one job after another) into one event.
const coalesce = 200 * time.Millisecond

// keepAlive is how often an idle event stream sends a comment, so that
// proxies do not close it.
const keepAlive = 30 * time.Second

// changes counts the changes the controller told, and publishes the
// count, at most once per coalescing period, to the streams waiting.
type changes struct {
	mu        sync.Mutex
	told      uint64        // changes told so far
	version   uint64        // told, as last published
	moved     chan struct{} // closed when a new version is published
	scheduled bool          // a publish is due
	// after runs publish later (time.AfterFunc; tests step it by hand).
	after func(time.Duration, func())
}

func newChanges() *changes {
	return &changes{moved: make(chan struct{}), after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// bump counts a change and makes sure a publish is due.
func (c *changes) bump() {
	c.mu.Lock()
	c.told++
	due := !c.scheduled
	c.scheduled = true
	c.mu.Unlock()
	if due {
		c.after(coalesce, c.publish)
	}
}

// publish makes every change told so far the current version and wakes
// the streams.
func (c *changes) publish() {
	c.mu.Lock()
	c.scheduled = false
	c.version = c.told
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
	since, err := strconv.ParseUint(r.URL.Query().Get("since"), 10, 64)
	hasSince := err == nil
	if r.URL.Query().Has("since") && !hasSince {
		http.Error(w, "since must be a version number", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	version, moved := d.live.current()
	if hasSince && version != since {
		// The page was read before changes its script had not yet
		// listened for: tell it now.
		fmt.Fprintf(w, "event: changed\ndata: %d\n\n", version)
	}
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": still here\n\n")
		case <-moved:
			var version uint64
			version, moved = d.live.current()
			fmt.Fprintf(w, "event: changed\ndata: %d\n\n", version)
		}
		fl.Flush()
	}
}

// sleep waits d, or less if ctx ends first (then false).
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
