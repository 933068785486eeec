package authz

import (
	"fmt"
	"testing"
)

func TestRoleNames(t *testing.T) {
	for r, want := range map[Role]string{User: "user", Operator: "operator", Admin: "admin", Root: "root", Role(9): "role(9)"} {
		if got := fmt.Sprint(r); got != want {
			t.Errorf("role %d = %q, want %q", int(r), got, want)
		}
	}
}
