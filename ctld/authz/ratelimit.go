package authz

import (
	"sync"
	"time"
)

// Rate limit defaults: generous for people and scripts, but a client
// polling in a tight loop is told to slow down instead of starving the
// controller (Slurm's controller is known to fall over under such loops).
const (
	DefaultRateLimit = 50  // requests per second per uid, sustained
	DefaultRateBurst = 200 // requests a uid may send at once
)

// Limiter is a token bucket per uid. Administrators and root are not
// limited: they are few and are who repairs a struggling cluster.
type Limiter struct {
	rate  float64 // tokens per second; <= 0: no limit
	burst float64

	mu      sync.Mutex // a leaf: nothing else is locked while it is held
	buckets map[uint32]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter allows rate requests a second per uid (<= 0: any number)
// and burst at once.
func NewLimiter(rate float64, burst int) *Limiter {
	return &Limiter{rate: rate, burst: float64(max(burst, 1)), buckets: make(map[uint32]*bucket)}
}

// Take spends one token of c's bucket. When none is left it reports
// limited and how long until one is. A nil Limiter limits nobody.
func (l *Limiter) Take(c Caller, now time.Time) (retry time.Duration, limited bool) {
	if l == nil || l.rate <= 0 || c.AtLeast(Admin) {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	b := l.buckets[c.UID]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[c.UID] = b
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(l.burst, b.tokens+dt*l.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, false
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), true
}

// sweepLocked forgets full buckets once a minute so memory follows the
// users active now, not every uid ever seen.
func (l *Limiter) sweepLocked(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for uid, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, uid)
		}
	}
}
