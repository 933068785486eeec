package jobspec

import (
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		in      string
		indexes []int  // nil: check count only
		count   int    // tasks
		running int    // %N
		format  string // canonical form
		dup     int    // first duplicate index, -1 for none
	}{
		{"0-15", nil, 16, 0, "0-15", -1},
		{"1,3,5", []int{1, 3, 5}, 3, 0, "1-5:2", -1},
		{"0-15:4", []int{0, 4, 8, 12}, 4, 0, "0-12:4", -1},
		{"0-15%4", nil, 16, 4, "0-15%4", -1},
		{"0,6,16-32", nil, 19, 0, "0,6,16-32", -1},
		{"1-3,5-9:2", []int{1, 2, 3, 5, 7, 9}, 6, 0, "1-3,5-9:2", -1},
		{"7", []int{7}, 1, 0, "7", -1},
		{"1,5", []int{1, 5}, 2, 0, "1,5", -1},
		{"5,1", []int{1, 5}, 2, 0, "1,5", -1},               // sorted
		{"0-10,5-15", nil, 16, 0, "0-15", 5},                // overlap runs once
		{"3,3", []int{3}, 1, 0, "3", 3},                     // duplicate runs once
		{"1,2,4,6", []int{1, 2, 4, 6}, 4, 0, "1-2,4,6", -1}, // greedy runs from the lowest; a far pair is no range
		{"0-4000000:1000000", []int{0, 1000000, 2000000, 3000000, 4000000}, 5, 0, "0-4000000:1000000", -1},
		{"0-3%1", []int{0, 1, 2, 3}, 4, 1, "0-3%1", -1},
		{"10-12:5", []int{10}, 1, 0, "10", -1}, // the step leaves one index
	} {
		a, dup, err := ParseArray(tc.in)
		if err != nil {
			t.Errorf("ParseArray(%q): %v", tc.in, err)
			continue
		}
		got := a.Indexes()
		if tc.indexes != nil && !slices.Equal(got, tc.indexes) {
			t.Errorf("ParseArray(%q) indexes = %v, want %v", tc.in, got, tc.indexes)
		}
		if a.Count() != tc.count || len(got) != tc.count || a.MaxRunning != tc.running || dup != tc.dup {
			t.Errorf("ParseArray(%q) = count %d (%d listed), running %d, dup %d; want %d, %d, %d",
				tc.in, a.Count(), len(got), a.MaxRunning, dup, tc.count, tc.running, tc.dup)
		}
		if f := FormatArray(a); f != tc.format {
			t.Errorf("FormatArray(ParseArray(%q)) = %q, want %q", tc.in, f, tc.format)
		}
	}
}

func TestParseArrayErrors(t *testing.T) {
	const hint = "use indexes and ranges like 0-15, 1,3,5, 0-15:4, with an optional %N running limit"
	for _, tc := range []struct{ in, want string }{
		{"", "no indexes: " + hint},
		{"%4", "no indexes: " + hint},
		{"1,,2", "empty index in the list: " + hint},
		{"1,", "empty index in the list: " + hint},
		{"-1", `"" is not an index: ` + hint},
		{"a-3", `"a" is not an index: ` + hint},
		{"1-", `"" is not an index: ` + hint},
		{"1-2-3", `"2-3" is not an index: ` + hint},
		{"15-0", "range 15-0 ends before it starts"},
		{"5:2", "a step (5:2) needs a range, as in 0-15:4"},
		{"0-15:0", `step "0" in 0-15:0 must be a whole number from 1`},
		{"0-15:", `step "" in 0-15: must be a whole number from 1`},
		{"0-4000001", "index 4000001 is over the maximum of 4000000"},
		{"99999999999999999999", `"99999999999999999999" is not an index: ` + hint},
		{"0-15%0", `the running limit after % must be a whole number from 1 (got "0")`},
		{"0-15%", `the running limit after % must be a whole number from 1 (got "")`},
		{"0-15%2%3", `the running limit after % must be a whole number from 1 (got "2%3")`},
		{"1 ,2", `"1 " is not an index: ` + hint},
	} {
		_, _, err := ParseArray(tc.in)
		want := "invalid --array " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("ParseArray(%q) error = %v\nwant %s", tc.in, err, want)
		}
	}
}

// A job array's task count and indexes agree with its ranges, whatever
// shape they have.
func TestJobArrayCount(t *testing.T) {
	a := api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 0, Step: 1}, {First: 2, Last: 11, Step: 3}, {First: 20, Last: 21, Step: 1}}}
	if got, want := a.Indexes(), []int{0, 2, 5, 8, 11, 20, 21}; !slices.Equal(got, want) || a.Count() != len(want) {
		t.Errorf("Indexes = %v (Count %d), want %v", got, a.Count(), want)
	}
	if f := FormatArray(a); !strings.Contains(f, "2-11:3") {
		t.Errorf("FormatArray = %q", f)
	}
}
