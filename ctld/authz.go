package ctld

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
)

// role is how much a caller may do. Roles are ordered: each may do
// everything the ones below it may.
type role int

const (
	roleUser     role = iota // own jobs only
	roleOperator             // + hold/release/cancel/requeue any job, view all
	roleAdmin                // + policies, partitions, nodes, accounts, images, modify any job
	roleRoot                 // + submit on behalf of another user, raise limits, negative nice
)

var roleNames = [...]string{"user", "operator", "admin", "root"}

func (r role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// routeRule is what one user-plane route demands. Min is checked here,
// before the handler runs; Scope says, for docs/security.md and the
// matrix test, what the handler then checks per job (ownership).
type routeRule struct {
	Min   role
	Scope string
}

// Ownership scopes: what a caller below the named role reaches.
const (
	scopeNone  = "-" // no per-job data
	scopeView  = "own jobs; operator+ or SharedView=YES: all"
	scopeAct   = "own jobs; operator+: any job" // hold, release, cancel, requeue
	scopeWrite = "own jobs; admin+: any job"    // update
	scopeLog   = "own jobs; operator+: any job; SharedView never"
	scopeUsage = "own usage; operator+: all users"   // acct, usage
	scopeSub   = "as the caller; root: --uid anyone" // submit
)

// userRoutes is the authorization matrix of the user plane: every route
// userHandler registers is here (TestMatrixCoversEveryRoute), and a route
// missing from it is refused, never served unchecked.
var userRoutes = map[string]routeRule{
	"POST /v1/jobs":          {roleUser, scopeSub},
	"POST /v1/jobs/test":     {roleUser, scopeSub},
	"GET /v1/jobs":           {roleUser, scopeView},
	"GET /v1/jobs/{id}":      {roleUser, scopeView},
	"GET /v1/jobs/{id}/wait": {roleUser, scopeView},
	"GET /v1/jobs/{id}/log":  {roleUser, scopeLog},
	"POST /v1/jobs/cancel":   {roleUser, scopeAct},
	"POST /v1/jobs/hold":     {roleUser, scopeAct},
	"POST /v1/jobs/release":  {roleUser, scopeAct},
	"POST /v1/jobs/requeue":  {roleUser, scopeAct},
	"POST /v1/jobs/update":   {roleUser, scopeWrite},
	"GET /v1/acct":           {roleUser, scopeUsage},
	"GET /v1/usage":          {roleUser, scopeUsage},
	"GET /v1/prio":           {roleUser, scopeNone},
	"GET /v1/share":          {roleUser, scopeNone},
	"GET /v1/nodes":          {roleUser, scopeNone},
	"GET /v1/partitions":     {roleUser, scopeNone},
	"GET /v1/ping":           {roleUser, scopeNone},
	"GET /v1/images":         {roleUser, scopeNone},
	"GET /v1/policies":       {roleUser, scopeNone},
	"POST /v1/images":        {roleAdmin, scopeNone},
	"POST /v1/policies":      {roleAdmin, scopeNone},
	"GET /v1/admin/backup":   {roleAdmin, scopeNone}, // backup.go
	"POST /v1/nodes/drain":   {roleAdmin, scopeNone}, // drain.go
	"POST /v1/nodes/down":    {roleAdmin, scopeNone},
	"POST /v1/nodes/resume":  {roleAdmin, scopeNone},
}

// nodeRoutes is the node plane's matrix: every call needs the cluster
// key (api.Verify), which only daemons hold; there are no user roles.
var nodeRoutes = []string{"POST /v1/node/register", "POST /v1/node/events", "POST /v1/node/cert"}

// roleOf resolves caller's role from corral.conf's access lines.
func (s *Server) roleOf(caller peer) role {
	if caller.UID == 0 {
		return roleRoot
	}
	if len(s.access.Admins)+len(s.access.Operators) == 0 {
		return roleUser
	}
	name := s.users.name(caller.UID)
	switch {
	case s.access.IsAdmin(name):
		return roleAdmin
	case s.access.IsOperator(name):
		return roleOperator
	}
	return roleUser
}

// atLeast reports whether caller holds role r. UID 0 is root even on a
// peer built before authorize ran.
func (p peer) atLeast(r role) bool { return p.UID == 0 || p.Role >= r }

// authorize is the user plane's one gate: identity (set by the socket's
// peer credentials or a verified remote credential), rate limit, then the
// route's minimum role. Handlers check ownership with the helpers below.
func (s *Server) authorize(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := peerFrom(r.Context())
		if !ok {
			writeError(w, errorf(http.StatusUnauthorized, "cannot tell who is calling: use the Unix socket, or send a credential from the local noded (see docs/security.md)"))
			return
		}
		p.Role = s.roleOf(p)
		if retry, limited := s.limits.take(p, time.Now()); limited {
			w.Header().Set("Retry-After", fmt.Sprint(max(1, (retry+time.Second-1)/time.Second)))
			w.Header().Set("Connection", "close") // a 429 must not keep a descriptor (connlimit.go)
			writeError(w, errorf(http.StatusTooManyRequests, "slow down: more than %g requests per second from uid %d; retry in %d ms",
				s.limits.rate, p.UID, max(1, retry.Milliseconds())))
			return
		}
		_, pattern := mux.Handler(r)
		if pattern == "" || pattern == "/" { // no such route, or wrong method: the mux answers
			mux.ServeHTTP(w, r)
			return
		}
		rule, ok := userRoutes[pattern]
		if !ok {
			writeError(w, errorf(http.StatusForbidden, "route %s has no authorization rule; refusing it (a controller bug: add it to ctld/authz.go)", pattern))
			return
		}
		if !p.atLeast(rule.Min) {
			writeError(w, errorf(http.StatusForbidden, "%s needs the %s role; uid %d is a %s (see AdminUsers/OperatorUsers in corral.conf)",
				pattern, rule.Min, p.UID, p.Role))
			return
		}
		if err := withinBound(w, r, pattern); err != nil { // bounds.go: what one request may cost
			writeError(w, err)
			return
		}
		mux.ServeHTTP(w, r.WithContext(withPeer(r.Context(), p)))
	})
}

// isAdmin: root and the users named by AdminUsers in corral.conf.
func (s *Server) isAdmin(caller peer) bool {
	return caller.atLeast(roleAdmin) || s.roleOf(caller) >= roleAdmin
}

// isOperator: operators, administrators and root.
func (s *Server) isOperator(caller peer) bool {
	return caller.atLeast(roleOperator) || s.roleOf(caller) >= roleOperator
}

// mayView says whether caller may see a job of uid in queue, show, wait:
// their own, everyone's for operators and up, or all with SharedView=YES.
func (s *Server) mayView(caller peer, uid uint32) bool {
	return caller.UID == uid || s.access.SharedView || s.isOperator(caller)
}

// seesAll says whether caller sees every user's jobs.
func (s *Server) seesAll(caller peer) bool { return s.access.SharedView || s.isOperator(caller) }

// mayReadLog: a job's output is its owner's, and operators' for support;
// SharedView never reaches it.
func (s *Server) mayReadLog(caller peer, uid uint32) bool {
	return caller.UID == uid || s.isOperator(caller)
}

// mayAct says whether caller may hold, release, cancel or requeue job.
func (s *Server) mayAct(caller peer, job *api.Job) bool {
	return caller.UID == job.UID || s.isOperator(caller)
}

// mayModify says whether caller may update job's attributes.
func (s *Server) mayModify(caller peer, job *api.Job) bool {
	return caller.UID == job.UID || s.isAdmin(caller)
}
