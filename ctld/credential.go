package ctld

import (
	"sync"
	"time"
)

// maxRememberedNonces bounds the replay cache. Only holders of the
// cluster key mint credentials, so reaching it means a misbehaving node;
// then new credentials are refused (503) rather than memory growing.
const maxRememberedNonces = 1 << 20

// nonceCache remembers the nonces of accepted credentials until they
// expire, so each credential is accepted once.
type nonceCache struct {
	mu    sync.Mutex
	seen  map[string]int64 // nonce -> expiry, unix seconds
	swept int64
}

// use records nonce; false if it was already used.
func (c *nonceCache) use(nonce string, expires int64, now time.Time) (fresh bool, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]int64)
	}
	if t := now.Unix(); t > c.swept {
		c.swept = t
		for n, exp := range c.seen {
			if exp < t {
				delete(c.seen, n)
			}
		}
	}
	if _, dup := c.seen[nonce]; dup {
		return false, false
	}
	if len(c.seen) >= maxRememberedNonces {
		return false, true
	}
	c.seen[nonce] = expires
	return true, false
}
