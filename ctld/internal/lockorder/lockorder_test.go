package lockorder

import (
	"strings"
	"testing"
)

// In order nothing happens, with or without the check; out of order the
// checking build panics naming both locks.
func TestOrder(t *testing.T) {
	var cycle Mutex[Cycle]
	var server RWMutex[Server]
	var fs Mutex[Fairshare]
	n := 0 // what the locks guard here
	cycle.Lock()
	server.RLock()
	fs.Lock()
	n++
	fs.Unlock()
	server.RUnlock()
	server.Lock()
	n++
	server.Unlock()
	cycle.Unlock()

	for name, wrong := range map[string]func(){
		"later then earlier": func() { server.Lock(); defer server.Unlock(); cycle.Lock(); n++; cycle.Unlock() },
		"recursive read":     func() { server.RLock(); defer server.RUnlock(); server.RLock(); n++; server.RUnlock() },
		"ledger then server": func() { fs.Lock(); defer fs.Unlock(); server.RLock(); n++; server.RUnlock() },
	} {
		if !Enabled {
			continue // the unchecked build would deadlock or not; nothing to see
		}
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg, _ = r.(string)
				}
			}()
			wrong()
			return ""
		}()
		if !strings.HasPrefix(got, "lock order: taking ") || !strings.Contains(got, "while holding") {
			t.Errorf("%s: panic %q, want a lock order panic", name, got)
		}
	}
	// Every lock a panic left is released by its defer.
	cycle.Lock()
	n++
	cycle.Unlock()
	if n != 3 {
		t.Errorf("%d critical sections ran, want 3", n)
	}
}
