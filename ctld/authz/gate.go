package authz

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Directory names users: the controller's account cache.
type Directory interface {
	// Name is uid's user name, or the number when it has no account.
	Name(uid uint32) string
}

// Refusal is a request the gate turns away: its fault kind and one line
// for the caller. Retry, when set, is how long a rate-limited caller
// should wait.
type Refusal struct {
	Kind  fault.Kind
	Msg   string
	Retry time.Duration
}

func (r *Refusal) Error() string { return r.Msg }

func refuse(kind fault.Kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Gate applies the tables and the access lines of corral.conf.
type Gate struct {
	access config.Access
	users  Directory
	limits *Limiter
}

// NewGate builds the gate for access, naming uids through users and
// limiting rates with limits (nil: no limit).
func NewGate(access config.Access, users Directory, limits *Limiter) *Gate {
	return &Gate{access: access, users: users, limits: limits}
}

// RoleOf resolves uid's role from corral.conf's access lines.
func (g *Gate) RoleOf(uid uint32) Role {
	if uid == 0 {
		return Root
	}
	if len(g.access.Admins)+len(g.access.Operators) == 0 {
		return User
	}
	name := g.users.Name(uid)
	switch {
	case g.access.IsAdmin(name):
		return Admin
	case g.access.IsOperator(name):
		return Operator
	}
	return User
}

// Limit spends one of c's requests; over the rate it refuses with 429
// and how long to wait.
func (g *Gate) Limit(c Caller, now time.Time) *Refusal {
	retry, limited := g.limits.Take(c, now)
	if !limited {
		return nil
	}
	r := refuse(fault.TooMany, "slow down: more than %g requests per second from uid %d; retry in %d ms",
		g.limits.rate, c.UID, max(1, retry.Milliseconds()))
	r.Retry = retry
	return r
}

// Route checks the rule of the route pattern (as the mux matched it) for
// c and applies its bound to r.
func (g *Gate) Route(c Caller, pattern string, w http.ResponseWriter, r *http.Request) *Refusal {
	rule, ok := UserRoutes[pattern]
	if !ok {
		return refuse(fault.Forbidden, "route %s has no authorization rule; refusing it (a controller bug: add it to authz.UserRoutes)", pattern)
	}
	if !c.AtLeast(rule.Min) {
		return refuse(fault.Forbidden, "%s needs the %s role; uid %d is a %s (see AdminUsers/OperatorUsers in corral.conf)",
			pattern, rule.Min, c.UID, c.Role)
	}
	return within(w, r, pattern)
}

// has reports whether c holds r, resolving the role when the gate has not
// run for c (a remote caller identified inside a handler).
func (g *Gate) has(c Caller, r Role) bool { return c.AtLeast(r) || g.RoleOf(c.UID) >= r }

// IsAdmin: root and the users named by AdminUsers in corral.conf.
func (g *Gate) IsAdmin(c Caller) bool { return g.has(c, Admin) }

// IsOperator: operators, administrators and root.
func (g *Gate) IsOperator(c Caller) bool { return g.has(c, Operator) }

// MayView says whether c may see a job of owner in queue, show, wait:
// their own, everyone's for operators and up, or all with SharedView=YES.
func (g *Gate) MayView(c Caller, owner uint32) bool {
	return c.UID == owner || g.access.SharedView || g.IsOperator(c)
}

// SeesAll says whether c sees every user's jobs.
func (g *Gate) SeesAll(c Caller) bool { return g.access.SharedView || g.IsOperator(c) }

// MayReadLog: a job's output is its owner's, and operators' for support;
// SharedView never reaches it.
func (g *Gate) MayReadLog(c Caller, owner uint32) bool { return c.UID == owner || g.IsOperator(c) }

// MayAct says whether c may hold, release, cancel or requeue a job of
// owner.
func (g *Gate) MayAct(c Caller, owner uint32) bool { return c.UID == owner || g.IsOperator(c) }

// MayModify says whether c may update a job of owner's attributes.
func (g *Gate) MayModify(c Caller, owner uint32) bool { return c.UID == owner || g.IsAdmin(c) }

// Admit is the whole gate for one request from uid: its role, its rate,
// then the rule and bound of pattern, the route the mux matched ("" for
// none: the mux answers that request itself, after the rate limit). It
// returns the caller with its role, or why not.
func (g *Gate) Admit(uid uint32, pattern string, w http.ResponseWriter, r *http.Request, now time.Time) (Caller, *Refusal) {
	c := Caller{UID: uid, Role: g.RoleOf(uid)}
	if no := g.Limit(c, now); no != nil {
		return c, no
	}
	if pattern == "" {
		return c, nil
	}
	return c, g.Route(c, pattern, w, r)
}
