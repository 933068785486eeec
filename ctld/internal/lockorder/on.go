//go:build lockcheck

package lockorder

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// Enabled says whether this build checks the order.
const Enabled = true

// held is, per goroutine, the ranks it holds, in the order taken.
var (
	heldMu sync.Mutex
	held   = map[uint64][]rank{}
)

// acquire panics if the calling goroutine holds a lock of r's rank or a
// later one; it checks before the lock is taken, where a wrong order would
// block.
func acquire(r rank) {
	id := goid()
	heldMu.Lock()
	defer heldMu.Unlock()
	n, name := r.order()
	for _, h := range held[id] {
		if hn, hname := h.order(); hn >= n {
			panic(fmt.Sprintf("lock order: taking %s while holding %s (ctld's doc.go gives the order)", name, hname))
		}
	}
	held[id] = append(held[id], r)
}

// release forgets the latest r the calling goroutine holds.
func release(r rank) {
	id := goid()
	heldMu.Lock()
	defer heldMu.Unlock()
	hs := held[id]
	i := slices.Index(hs, r)
	if i < 0 {
		panic(fmt.Sprintf("lock order: unlocking a %T this goroutine does not hold", r))
	}
	if hs = slices.Delete(hs, i, i+1); len(hs) == 0 {
		delete(held, id)
	} else {
		held[id] = hs
	}
}

// goid is the calling goroutine's number, from its stack header
// ("goroutine 42 [running]:"); slow, and only in this build.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("lock order: cannot read the goroutine's id: " + err.Error())
	}
	return id
}
