package jobspec

import (
	"strings"
	"testing"
)

// TestConstraint: sbatch(1)'s forms, each against nodes of known features.
func TestConstraint(t *testing.T) {
	a100 := []string{"gpu", "a100", "ib"}
	h100 := []string{"gpu", "h100"}
	cpu := []string{"cpu", "ib"}
	for _, tc := range []struct {
		expr     string
		a, h, c  bool // matches a100, h100, cpu
		brackets bool
	}{
		{"gpu", true, true, false, false},
		{"a100", true, false, false, false},
		{"gpu&ib", true, false, false, false},
		{"a100|h100", true, true, false, false},
		{"ib|h100&gpu", true, true, true, false}, // & binds tighter
		{"(ib|h100)&gpu", true, true, false, false},
		{"[a100|h100]", true, true, false, true},
		{"[a100|h100]&ib", true, false, false, true},
		{"nosuch", false, false, false, false},
	} {
		c, err := ParseConstraint(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := [3]bool{c.Matches(a100), c.Matches(h100), c.Matches(cpu)}; got != [3]bool{tc.a, tc.h, tc.c} {
			t.Errorf("%s matches a100, h100, cpu nodes: %v, want %v", tc.expr, got, [3]bool{tc.a, tc.h, tc.c})
		}
		if c.Brackets != tc.brackets {
			t.Errorf("%s: brackets %v", tc.expr, c.Brackets)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{"", "a feature is missing at the end"},
		{"a&", "a feature is missing at the end"},
		{"a||b", "a feature is missing at 3"},
		{"(a|b", `'(' is not closed`},
		{"[a|b)", `'[' is not closed`},
		{"a)", `unexpected ')' at 2`},
		{"gpu*2", "node counts (feature*N) are not supported"},
		{"a b", `unexpected ' ' at 2`},
	} {
		_, err := ParseConstraint(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "invalid --constraint") {
			t.Errorf("%q: %v, want %q", tc.expr, err, tc.want)
		}
	}
}
