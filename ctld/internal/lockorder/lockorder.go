// Package lockorder ranks the controller's ordered mutexes, in the order
// ctld's package doc gives: a goroutine may take a lock only while it
// holds none of the same or a later rank. Built with the lockcheck tag
// (make test does), taking one out of order panics at once, naming both
// locks, instead of deadlocking one day under load; without the tag the
// check compiles to nothing.
package lockorder

import "sync"

// rank is one place in the order; only this package defines ranks, so the
// order lives here and in ctld's doc.go, nowhere else.
type rank interface {
	order() (int, string)
}

// The ranks, first to last.
type (
	// Cycle is ctld's Server.cycleMu: one scheduling cycle (or test-only
	// plan) at a time.
	Cycle struct{}
	// Server is ctld's Server.mu: the queue (jobs, arrays) and the nodes.
	Server struct{}
	// Fairshare is fairshare.State's lock: the usage ledger.
	Fairshare struct{}
)

func (Cycle) order() (int, string)     { return 1, "Server.cycleMu" }
func (Server) order() (int, string)    { return 2, "Server.mu" }
func (Fairshare) order() (int, string) { return 3, "fairshare.State.mu" }

// Mutex is a sync.Mutex of rank R; the zero value is unlocked.
type Mutex[R rank] struct{ mu sync.Mutex }

func (m *Mutex[R]) Lock() {
	if Enabled {
		acquire(*new(R))
	}
	m.mu.Lock()
}

func (m *Mutex[R]) Unlock() {
	if Enabled {
		release(*new(R))
	}
	m.mu.Unlock()
}

// RWMutex is a sync.RWMutex of rank R; the zero value is unlocked. A read
// lock counts as holding it: taking it again, even to read, is out of
// order (a recursive read lock deadlocks once a writer waits).
type RWMutex[R rank] struct{ mu sync.RWMutex }

func (m *RWMutex[R]) Lock() {
	if Enabled {
		acquire(*new(R))
	}
	m.mu.Lock()
}

func (m *RWMutex[R]) Unlock() {
	if Enabled {
		release(*new(R))
	}
	m.mu.Unlock()
}

func (m *RWMutex[R]) RLock() {
	if Enabled {
		acquire(*new(R))
	}
	m.mu.RLock()
}

func (m *RWMutex[R]) RUnlock() {
	if Enabled {
		release(*new(R))
	}
	m.mu.RUnlock()
}
