package ctld

import "github.com/corral-hpc/corral/ctld/authz"

// Rate limit defaults (Config.RateLimit, Config.RateBurst).
const (
	DefaultRateLimit = authz.DefaultRateLimit
	DefaultRateBurst = authz.DefaultRateBurst
)

var _ authz.Directory = (*accounts)(nil)

// caller is p as package authz sees it: every ownership check the domain
// methods make is a Gate method over it and a job's owner.
func (p peer) caller() authz.Caller { return authz.Caller{UID: p.UID, Role: p.Role} }
