package ctld

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Rate limit defaults (Config.RateLimit, Config.RateBurst).
const (
	DefaultRateLimit = authz.DefaultRateLimit
	DefaultRateBurst = authz.DefaultRateBurst
)

var _ authz.Directory = (*accounts)(nil)

// caller is p as package authz sees it: every ownership check is a Gate
// method over it and a job's owner.
func (p peer) caller() authz.Caller { return authz.Caller{UID: p.UID, Role: p.Role} }

// atLeast reports whether p holds role r. UID 0 is root even on a peer
// built before authorize ran.
func (p peer) atLeast(r authz.Role) bool { return p.caller().AtLeast(r) }

// authorize is the user plane's one gate: identity (set by the socket's
// peer credentials or a verified remote credential), then package authz:
// rate limit, the route's minimum role and its bound. Handlers check
// ownership with the Gate's own methods.
func (s *Server) authorize(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := peerFrom(r.Context())
		if !ok {
			writeError(w, fault.Errorf(fault.Unauthenticated, "cannot tell who is calling: use the Unix socket, or send a credential from the local noded (see docs/security.md)"))
			return
		}
		_, pattern := mux.Handler(r)
		if pattern == "/" { // no such route, or wrong method: the mux answers
			pattern = ""
		}
		c, no := s.gate.Admit(p.UID, pattern, w, r, time.Now())
		if no != nil {
			if no.Kind == fault.TooMany {
				w.Header().Set("Retry-After", fmt.Sprint(max(1, (no.Retry+time.Second-1)/time.Second)))
				w.Header().Set("Connection", "close") // a 429 must not keep a descriptor
			}
			writeError(w, fault.Errorf(no.Kind, "%s", no.Msg))
			return
		}
		p.Role = c.Role
		mux.ServeHTTP(w, r.WithContext(withPeer(r.Context(), p)))
	})
}
