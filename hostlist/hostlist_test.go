package hostlist

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func mustExpand(t *testing.T, expr string) []string {
	t.Helper()
	names, err := Expand(expr)
	if err != nil {
		t.Fatalf("Expand(%q): %v", expr, err)
	}
	return names
}

func TestExpand(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{"node1", []string{"node1"}},
		{"node[1-4,7],gpu01", []string{"node1", "node2", "node3", "node4", "node7", "gpu01"}},
		{"n[01-03]", []string{"n01", "n02", "n03"}},
		{"n[8-11]", []string{"n8", "n9", "n10", "n11"}},
		{"n[098-101]", []string{"n098", "n099", "n100", "n101"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"n[1-2]-ib", []string{"n1-ib", "n2-ib"}},
		{" a , b ", []string{"a", "b"}},
		{"a,a,n[1-2],n1", []string{"a", "n1", "n2"}},
		{"[3-4]", []string{"3", "4"}},
		{"n[5]", []string{"n5"}},
	}
	for _, tt := range tests {
		if got := mustExpand(t, tt.expr); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Expand(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct{ expr, wantErr string }{
		{"", "empty host list"},
		{"  ", "empty host list"},
		{"a,,b", "empty name between commas"},
		{"a,", "empty name between commas"},
		{"n[1-3", "'[' without ']'"},
		{"n1-3]", "']' without '['"},
		{"n[[1]]", "nested"},
		{"n[]", "empty brackets"},
		{"n[3-1]", "goes backwards"},
		{"n[a-3]", `"a" is not a number`},
		{"n[1-]", "empty number"},
		{"n[-2]", "empty number"},
		{"n[1-99999999]", "more than"},
		{"a[1-2000]b[1-2000]", "more than"},
		{"n[99999999999999999999]", "too large"},
		{"bad name", "white space"},
	}
	for _, tt := range tests {
		_, err := Expand(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Expand(%q) error = %v, want one containing %q", tt.expr, err, tt.wantErr)
		}
	}
}

func TestCompress(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"node1"}, "node1"},
		{[]string{"node1", "node2", "node3", "node4", "node7", "gpu01"}, "gpu01,node[1-4,7]"},
		{[]string{"n3", "n1", "n2", "n2"}, "n[1-3]"},
		{[]string{"n01", "n02", "n03", "n10"}, "n[01-03,10]"},
		{[]string{"n9", "n10", "n11"}, "n[9-11]"},
		{[]string{"n1", "n01"}, "n01,n1"},
		{[]string{"login", "n1", "n2"}, "login,n[1-2]"},
		{[]string{"a", "b"}, "a,b"},
		{[]string{"r1n1", "r1n2", "r2n1"}, "r1n[1-2],r2n1"},
	}
	for _, tt := range tests {
		if got := Compress(tt.names); got != tt.want {
			t.Errorf("Compress(%v) = %q, want %q", tt.names, got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	exprs := []string{
		"node[1-4,7],gpu01",
		"n[01-10],n[100-120],login",
		"a,b,c[1-3],c[005-007]",
		"x[0-1000]",
		"n[08-12],n[7-9]",
	}
	for _, expr := range exprs {
		names := mustExpand(t, expr)
		compressed := Compress(names)
		again := mustExpand(t, compressed)
		a, b := append([]string(nil), names...), append([]string(nil), again...)
		sort.Strings(a)
		sort.Strings(b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q -> %q -> %v: names differ from %v", expr, compressed, again, names)
		}
		if c2 := Compress(again); c2 != compressed {
			t.Errorf("Compress is not stable: %q then %q", compressed, c2)
		}
	}
}

func TestSort(t *testing.T) {
	names := []string{"node10", "node2", "gpu1", "node1", "node", "node02"}
	Sort(names)
	want := []string{"gpu1", "node", "node1", "node02", "node2", "node10"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Sort = %v, want %v", names, want)
	}
}

// TestExpandMaxBoundsTheWhole: a limit holds for the whole expression:
// many ranges in one bracket, many plain names, many items. A bracket of
// ranges each under MaxNames once expanded without end.
func TestExpandMaxBoundsTheWhole(t *testing.T) {
	many := "n[" + strings.Repeat("0-999,", 20) + "0-999]"
	for _, expr := range []string{many, "a,b,c,d,e,f,g,h,i,j,k", "n[0-5],m[0-5]", "n[0-10]"} {
		if names, err := ExpandMax(expr, 10); err == nil {
			t.Errorf("ExpandMax(%.40q, 10) = %d names, want an error", expr, len(names))
		}
	}
	if names, err := ExpandMax("n[0-4],m[0-4]", 10); err != nil || len(names) != 10 {
		t.Errorf("ExpandMax of exactly 10: %d names, %v", len(names), err)
	}
	if _, err := Expand(many); err != nil { // 21,000 names (with repeats): within MaxNames
		t.Errorf("Expand(%.40q): %v", many, err)
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"n1", "n1", 0}, {"n2", "n10", -1}, {"n10", "n2", 1}, {"a", "n1", -1}, {"n01", "n1", -1}} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
