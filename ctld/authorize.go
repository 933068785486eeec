package ctld

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Rate limit defaults (Config.RateLimit, Config.RateBurst).
const (
	DefaultRateLimit = authz.DefaultRateLimit
	DefaultRateBurst = authz.DefaultRateBurst
)

var _ authz.Directory = (*accounts)(nil)

// caller is p as package authz sees it.
func (p peer) caller() authz.Caller { return authz.Caller{UID: p.UID, Role: p.Role} }

// atLeast reports whether p holds role r. UID 0 is root even on a peer
// built before authorize ran.
func (p peer) atLeast(r authz.Role) bool { return p.caller().AtLeast(r) }

// authorize is the user plane's one gate: identity (set by the socket's
// peer credentials or a verified remote credential), then package authz:
// rate limit, the route's minimum role and its bound. Handlers check
// ownership with the helpers below.
func (s *Server) authorize(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := peerFrom(r.Context())
		if !ok {
			writeError(w, fault.Errorf(fault.Unauthenticated, "cannot tell who is calling: use the Unix socket, or send a credential from the local noded (see docs/security.md)"))
			return
		}
		p.Role = s.gate.RoleOf(p.UID)
		if no := s.gate.Limit(p.caller(), time.Now()); no != nil {
			w.Header().Set("Retry-After", fmt.Sprint(max(1, (no.Retry+time.Second-1)/time.Second)))
			w.Header().Set("Connection", "close") // a 429 must not keep a descriptor (connlimit.go)
			writeError(w, fault.Errorf(no.Kind, "%s", no.Msg))
			return
		}
		_, pattern := mux.Handler(r)
		if pattern == "" || pattern == "/" { // no such route, or wrong method: the mux answers
			mux.ServeHTTP(w, r)
			return
		}
		if no := s.gate.Route(p.caller(), pattern, w, r); no != nil {
			writeError(w, fault.Errorf(no.Kind, "%s", no.Msg))
			return
		}
		mux.ServeHTTP(w, r.WithContext(withPeer(r.Context(), p)))
	})
}

// The ownership checks handlers make, as package authz rules them.

func (s *Server) isAdmin(caller peer) bool             { return s.gate.IsAdmin(caller.caller()) }
func (s *Server) isOperator(caller peer) bool          { return s.gate.IsOperator(caller.caller()) }
func (s *Server) mayView(caller peer, uid uint32) bool { return s.gate.MayView(caller.caller(), uid) }
func (s *Server) seesAll(caller peer) bool             { return s.gate.SeesAll(caller.caller()) }
func (s *Server) mayReadLog(caller peer, uid uint32) bool {
	return s.gate.MayReadLog(caller.caller(), uid)
}
func (s *Server) mayAct(caller peer, job *api.Job) bool {
	return s.gate.MayAct(caller.caller(), job.UID)
}
func (s *Server) mayModify(caller peer, job *api.Job) bool {
	return s.gate.MayModify(caller.caller(), job.UID)
}
