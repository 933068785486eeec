package authz

import "fmt"

// Role is how much a caller may do. Roles are ordered: each may do
// everything the ones below it may.
type Role int

const (
	User     Role = iota // own jobs only
	Operator             // + hold/release/cancel/requeue any job, view all
	Admin                // + policies, partitions, nodes, accounts, images, modify any job
	Root                 // + submit on behalf of another user, raise limits, negative nice
)

var roleNames = [...]string{"user", "operator", "admin", "root"}

func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// Caller is who sends a request, with the role the gate found; Role is
// zero (User) until the gate has run.
type Caller struct {
	UID  uint32
	Role Role
}

// AtLeast reports whether c holds role r. UID 0 is root even before the
// gate ran.
func (c Caller) AtLeast(r Role) bool { return c.UID == 0 || c.Role >= r }
