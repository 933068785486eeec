package web

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A burst of changes schedules one publish, which wakes the streams once
// with the count of every change told; the next change schedules anew.
func TestChangesPublishABurstOnce(t *testing.T) {
	c := newChanges()
	var due []func()
	c.after = func(d time.Duration, f func()) {
		if d != coalesce {
			t.Errorf("publish scheduled after %v, want %v", d, coalesce)
		}
		due = append(due, f)
	}
	version, moved := c.current()
	for range 1000 {
		c.bump()
	}
	if len(due) != 1 {
		t.Fatalf("1000 changes scheduled %d publishes, want 1", len(due))
	}
	select {
	case <-moved:
		t.Fatal("the streams were woken before the publish")
	default:
	}
	due[0]()
	select {
	case <-moved:
	default:
		t.Fatal("the publish did not wake the streams")
	}
	next, movedAgain := c.current()
	if next != version+1000 {
		t.Fatalf("published version %d, want %d", next, version+1000)
	}
	select {
	case <-movedAgain:
		t.Fatal("the new version's channel is already closed")
	default:
	}
	c.bump()
	if len(due) != 2 {
		t.Fatalf("a change after the publish scheduled %d publishes in all, want 2", len(due))
	}
}

// A page read before a change its script had not yet listened for is
// told at once when it listens (events?since=the version it was read
// at); a page read at the current version is told nothing until the next
// change. Without since, nothing is told at once.
func TestEventsTellWhatThePageMissed(t *testing.T) {
	d := &Dashboard{live: newChanges()}
	d.live.after = func(_ time.Duration, f func()) { f() } // publish at once
	stream := func(query string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		w := httptest.NewRecorder()
		d.events(w, httptest.NewRequest("GET", "/events"+query, nil).WithContext(ctx), nil, "")
		return w.Body.String()
	}
	d.live.bump() // a change published before the page listens
	for _, tc := range []struct {
		query string
		told  bool
	}{
		{"?since=0", true},  // read before the change
		{"?since=1", false}, // read after it
		{"", false},         // a page without a version
	} {
		if got := strings.Contains(stream(tc.query), "event: changed\ndata: 1\n"); got != tc.told {
			t.Errorf("events%s told the change: %v, want %v", tc.query, got, tc.told)
		}
	}
	w := httptest.NewRecorder()
	d.events(w, httptest.NewRequest("GET", "/events?since=x", nil), nil, "")
	if w.Code != 400 {
		t.Errorf("events?since=x: %d, want 400", w.Code)
	}
}
