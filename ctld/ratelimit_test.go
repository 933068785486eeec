package ctld

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func withRate(rate float64, burst int) func(*Config) {
	return func(c *Config) { c.RateLimit, c.RateBurst = rate, burst }
}

// TestRateLimitIsolatesUsers: a client polling in a tight loop gets 429
// with a clear "slow down" line and Retry-After, while another user's
// requests still succeed, and root is never limited.
func TestRateLimitIsolatesUsers(t *testing.T) {
	tc := MustServer(t, withRate(5, 20))
	h := userHandler(tc.srv)
	call := func(uid uint32) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/jobs", nil)
		req = req.WithContext(withPeer(req.Context(), peer{UID: uid, GID: uid}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	var limited *httptest.ResponseRecorder
	for i := 0; i < 1000 && limited == nil; i++ {
		if rec := call(nobody); rec.Code == http.StatusTooManyRequests {
			limited = rec
		} else if rec.Code != http.StatusOK {
			t.Fatalf("tight loop request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if limited == nil {
		t.Fatal("1000 requests in a tight loop were never limited")
	}
	msg := errorText(t, limited.Body.Bytes())
	if !strings.HasPrefix(msg, "slow down: more than 5 requests per second from uid 65534; retry in ") || !strings.HasSuffix(msg, " ms") {
		t.Errorf("429 message %q", msg)
	}
	if ra := limited.Header().Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q", ra)
	}
	for _, uid := range []uint32{uidOperator, 0} {
		if rec := call(uid); rec.Code != http.StatusOK {
			t.Errorf("uid %d while uid %d is limited: %d %s", uid, nobody, rec.Code, rec.Body)
		}
	}
	for range 100 {
		if rec := call(0); rec.Code != http.StatusOK {
			t.Fatalf("root was limited: %d %s", rec.Code, rec.Body)
		}
	}
}
