package config

import (
	"fmt"
	"strings"
)

// Access is what corral.conf says about who administers the cluster and
// who sees whose jobs, on a line of its own:
//
//	AdminUsers=alice,bob OperatorUsers=carol SharedView=NO
//
// Root is always an administrator. Without SharedView=YES users see only
// their own jobs in queue, show and log; operators and administrators see
// all (docs/security.md has the whole authorization matrix).
type Access struct {
	Admins     []string
	Operators  []string
	SharedView bool
}

// accessKeys lists the keys of access lines, in the order documented.
var accessKeys = []string{"AdminUsers", "OperatorUsers", "SharedView"}

// IsAdmin reports whether user is listed in AdminUsers.
func (a Access) IsAdmin(user string) bool {
	for _, u := range a.Admins {
		if u == user {
			return true
		}
	}
	return false
}

// IsOperator reports whether user is listed in OperatorUsers.
func (a Access) IsOperator(user string) bool {
	for _, u := range a.Operators {
		if u == user {
			return true
		}
	}
	return false
}

// set applies one access line; settings is shared with the other lines
// so a key set twice is refused.
func (a *Access) set(fields []string, lineNo int, settings map[string]int) error {
	return setLine(fields, lineNo, settings, "an access line", accessKeys, func(key, v string) error {
		switch key {
		case "AdminUsers":
			for _, u := range strings.Split(v, ",") {
				if u = strings.TrimSpace(u); u == "" {
					return fmt.Errorf("AdminUsers=%s: give user names separated by commas", v)
				}
				a.Admins = append(a.Admins, strings.TrimSpace(u))
			}
		case "OperatorUsers":
			for _, u := range strings.Split(v, ",") {
				if u = strings.TrimSpace(u); u == "" {
					return fmt.Errorf("OperatorUsers=%s: give user names separated by commas", v)
				}
				a.Operators = append(a.Operators, u)
			}
		case "SharedView":
			switch strings.ToUpper(v) {
			case "YES", "1":
				a.SharedView = true
			case "NO", "0":
				a.SharedView = false
			default:
				return fmt.Errorf("SharedView=%s: use YES or NO", v)
			}
		}
		return nil
	})
}
