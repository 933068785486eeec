package web

import (
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
