package authz

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
)

type names map[uint32]string

func (n names) Name(uid uint32) string { return n[uid] }

// Admit resolves the role, then limits the rate, then applies the
// route's rule: each refusal with its own kind, and the caller it admits
// carries its role.
func TestAdmit(t *testing.T) {
	const alice, bob = 1000, 1001
	g := NewGate(config.Access{Admins: []string{"alice"}}, names{alice: "alice", bob: "bob"}, NewLimiter(1, 1))
	now := time.Unix(1_000_000, 0)
	admit := func(uid uint32, pattern string) (Caller, *Refusal) {
		r := httptest.NewRequest(http.MethodPost, "/v1/policies", nil)
		return g.Admit(uid, pattern, httptest.NewRecorder(), r, now)
	}
	if c, no := admit(alice, "POST /v1/policies"); no != nil || c.Role != Admin {
		t.Errorf("admin on an admin route: %+v %v", c, no)
	}
	if c, no := admit(bob, "POST /v1/policies"); no == nil || no.Kind != fault.Forbidden || c.Role != User {
		t.Errorf("user on an admin route: %+v %v", c, no)
	}
	// bob's one token is spent: the rate limit refuses before any route.
	if _, no := admit(bob, ""); no == nil || no.Kind != fault.TooMany || no.Retry <= 0 {
		t.Errorf("user over the rate: %v", no)
	}
	if _, no := admit(0, "GET /v1/nowhere"); no == nil || no.Kind != fault.Forbidden {
		t.Errorf("a route without a rule: %v", no)
	}
	if c, no := admit(0, ""); no != nil || c.Role != Root {
		t.Errorf("root, no route matched (the mux answers): %+v %v", c, no)
	}
}
