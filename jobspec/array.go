package jobspec

import (
	"fmt"
	mathbits "math/bits"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// MaxArrayIndex is the largest array index jobspec accepts: Slurm's hard
// ceiling (MaxArraySize 4000001). A cluster's own, usually far smaller,
// limit is the controller's to enforce.
const MaxArrayIndex = 4000000

const arrayHint = "use indexes and ranges like 0-15, 1,3,5, 0-15:4, with an optional %N running limit"

// ParseArray reads an --array specification: a comma-separated list of
// indexes (7) and ranges (0-15, or 0-15:4 for every 4th), then an optional
// %N limit on how many tasks run at once. Indexes run from 0 to
// MaxArrayIndex. An index listed more than once runs once, as in sbatch;
// dup reports the first such index (-1 when there is none) so that the
// caller can say so.
func ParseArray(s string) (a api.JobArray, dup int, err error) {
	a, dup, err = parseArray(s)
	if err != nil {
		return api.JobArray{}, -1, fmt.Errorf("invalid --array %s: %v", quoteValue(s), err)
	}
	return a, dup, nil
}

func parseArray(s string) (api.JobArray, int, error) {
	var a api.JobArray
	list, limit, hasLimit := strings.Cut(s, "%")
	if hasLimit {
		n, ok := parseCount(limit)
		if !ok || n < 1 || n > MaxArrayIndex+1 {
			return a, -1, fmt.Errorf("the running limit after %% must be a whole number from 1 (got %q)", limit)
		}
		a.MaxRunning = int(n)
	}
	if list == "" {
		return a, -1, fmt.Errorf("no indexes: %s", arrayHint)
	}
	// A set of indexes, built as a bitmap: overlapping ranges are legal and
	// the canonical ranges come out sorted and disjoint.
	var set bitmap
	dup := -1
	for _, tok := range strings.Split(list, ",") {
		r, err := parseArrayRange(tok)
		if err != nil {
			return a, -1, err
		}
		for i := r.First; i <= r.Last; i += r.Step {
			if set.has(i) && dup < 0 {
				dup = i
			}
			set.add(i)
		}
	}
	a.Ranges = set.ranges()
	return a, dup, nil
}

// parseArrayRange reads N, N-M or N-M:S.
func parseArrayRange(tok string) (api.ArrayRange, error) {
	span, stepText, hasStep := strings.Cut(tok, ":")
	firstText, lastText, isRange := strings.Cut(span, "-")
	if tok == "" {
		return api.ArrayRange{}, fmt.Errorf("empty index in the list: %s", arrayHint)
	}
	first, err := arrayIndex(firstText)
	if err != nil {
		return api.ArrayRange{}, err
	}
	r := api.ArrayRange{First: first, Last: first, Step: 1}
	if hasStep && !isRange {
		return r, fmt.Errorf("a step (%s) needs a range, as in 0-15:4", tok)
	}
	if isRange {
		if r.Last, err = arrayIndex(lastText); err != nil {
			return r, err
		}
		if r.Last < r.First {
			return r, fmt.Errorf("range %s ends before it starts", span)
		}
	}
	if hasStep {
		n, ok := parseCount(stepText)
		if !ok || n < 1 || n > MaxArrayIndex {
			return r, fmt.Errorf("step %q in %s must be a whole number from 1", stepText, tok)
		}
		r.Step = int(n)
		r.Last -= (r.Last - r.First) % r.Step // so that Last is an index of the range
	}
	return r, nil
}

func arrayIndex(s string) (int, error) {
	n, ok := parseCount(s)
	switch {
	case !ok:
		return 0, fmt.Errorf("%q is not an index: %s", s, arrayHint)
	case n > MaxArrayIndex:
		return 0, fmt.Errorf("index %d is over the maximum of %d", n, MaxArrayIndex)
	}
	return int(n), nil
}

// FormatArray prints an array as sbatch would take it back: ParseArray of
// the result gives the same array.
func FormatArray(a api.JobArray) string {
	parts := make([]string, 0, len(a.Ranges))
	for _, r := range a.Ranges {
		switch {
		case r.First == r.Last:
			parts = append(parts, strconv.Itoa(r.First))
		case r.Step <= 1:
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d:%d", r.First, r.Last, r.Step))
		}
	}
	s := strings.Join(parts, ",")
	if a.MaxRunning > 0 {
		s += "%" + strconv.Itoa(a.MaxRunning)
	}
	return s
}

// bitmap is a set of array indexes (at most MaxArrayIndex+1 bits, 500 KB).
type bitmap []uint64

func (b *bitmap) add(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitmap) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// ranges compresses the set into runs of equally spaced indexes, read
// greedily from the lowest up: {1,2,3,5,7,9} is 1-3 and 5-9:2. Two indexes
// far apart are not a range: {1,5} stays 1,5.
func (b bitmap) ranges() []api.ArrayRange {
	var out []api.ArrayRange
	var run api.ArrayRange
	n := 0 // indexes in run
	for i := b.next(0); i >= 0; i = b.next(i + 1) {
		switch {
		case n == 0:
			run, n = api.ArrayRange{First: i, Last: i, Step: 1}, 1
		case n == 1:
			run.Last, run.Step, n = i, i-run.First, 2
		case i-run.Last == run.Step:
			run.Last, n = i, n+1
		case n == 2 && run.Step > 1:
			out = append(out, api.ArrayRange{First: run.First, Last: run.First, Step: 1})
			run = api.ArrayRange{First: run.Last, Last: i, Step: i - run.Last}
		default:
			out = append(out, run)
			run, n = api.ArrayRange{First: i, Last: i, Step: 1}, 1
		}
	}
	switch {
	case n == 2 && run.Step > 1:
		out = append(out, api.ArrayRange{First: run.First, Last: run.First, Step: 1},
			api.ArrayRange{First: run.Last, Last: run.Last, Step: 1})
	case n > 0:
		out = append(out, run)
	}
	return out
}

// next returns the lowest index in the set that is at least i, or -1.
func (b bitmap) next(i int) int {
	for w := i / 64; w < len(b); w++ {
		bits := b[w]
		if w == i/64 {
			bits &^= 1<<(i%64) - 1
		}
		if bits != 0 {
			return w*64 + mathbits.TrailingZeros64(bits)
		}
	}
	return -1
}
