package hostlist

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxNames bounds how many names one expression may expand to, so a typo
// such as "n[1-99999999]" is an error rather than an out-of-memory.
const MaxNames = 1 << 20

// Expand returns the names an expression stands for, in the order written,
// duplicates removed. Whitespace around items is ignored.
func Expand(expr string) ([]string, error) { return ExpandMax(expr, MaxNames) }

// ExpandMax is Expand with a lower bound than MaxNames on the names, for
// callers that take expressions from a request.
func ExpandMax(expr string, limit int) ([]string, error) {
	limit = min(limit, MaxNames)
	items, err := splitTop(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := make(map[string]bool)
	for _, item := range items {
		names, err := expandItem(item, limit-len(out))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		if len(out) > limit { // a plain name has no bracket to check
			return nil, fmt.Errorf("host list %q expands to more than %d names", expr, limit)
		}
	}
	return out, nil
}

// splitTop splits on commas outside brackets and checks bracket balance.
func splitTop(expr string) ([]string, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("empty host list")
	}
	var items []string
	depth, start := 0, 0
	for i, c := range expr {
		switch c {
		case '[':
			if depth > 0 {
				return nil, fmt.Errorf("host list %q: nested '['", expr)
			}
			depth++
		case ']':
			if depth == 0 {
				return nil, fmt.Errorf("host list %q: ']' without '['", expr)
			}
			depth--
		case ',':
			if depth == 0 {
				items = append(items, expr[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("host list %q: '[' without ']'", expr)
	}
	items = append(items, expr[start:])
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, fmt.Errorf("host list %q: empty name between commas", expr)
		}
	}
	return items, nil
}

// expandItem expands one comma-free item such as "r[1-2]n[01-03]-ib".
func expandItem(item string, budget int) ([]string, error) {
	names := []string{""}
	rest := item
	for rest != "" {
		open := strings.IndexByte(rest, '[')
		if open < 0 {
			if err := checkLiteral(item, rest); err != nil {
				return nil, err
			}
			for i := range names {
				names[i] += rest
			}
			break
		}
		if err := checkLiteral(item, rest[:open]); err != nil {
			return nil, err
		}
		end := strings.IndexByte(rest, ']')
		suffixes, err := expandRanges(item, rest[open+1:end], budget)
		if err != nil {
			return nil, err
		}
		if len(names)*len(suffixes) > budget {
			return nil, fmt.Errorf("host list %q expands to more than %d names", item, budget)
		}
		next := make([]string, 0, len(names)*len(suffixes))
		for _, n := range names {
			for _, s := range suffixes {
				next = append(next, n+rest[:open]+s)
			}
		}
		names = next
		rest = rest[end+1:]
	}
	return names, nil
}

func checkLiteral(item, lit string) error {
	if i := strings.IndexAny(lit, " \t\n"); i >= 0 {
		return fmt.Errorf("host list item %q contains white space", item)
	}
	return nil
}

// expandRanges expands the inside of one bracket: "1-4,07,10-11".
// At most budget numbers: a bracket of many ranges is bounded as a whole.
func expandRanges(item, inner string, budget int) ([]string, error) {
	if strings.TrimSpace(inner) == "" {
		return nil, fmt.Errorf("host list item %q has empty brackets", item)
	}
	var out []string
	for _, r := range strings.Split(inner, ",") {
		r = strings.TrimSpace(r)
		loS, hiS, isRange := strings.Cut(r, "-")
		lo, err := parseNum(item, loS)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parseNum(item, hiS); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("host list item %q: range %s goes backwards", item, r)
			}
		}
		if hi-lo >= uint64(budget-len(out)) {
			return nil, fmt.Errorf("host list item %q: range %s has more than %d names", item, r, budget-len(out))
		}
		width := 0
		if len(loS) > 1 && loS[0] == '0' {
			width = len(loS) // zero-padded: every number keeps the width
		}
		for n := lo; n <= hi; n++ {
			out = append(out, fmt.Sprintf("%0*d", width, n))
		}
	}
	return out, nil
}

func parseNum(item, s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("host list item %q: empty number in a range", item)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("host list item %q: %q is not a number", item, s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("host list item %q: %q is too large", item, s)
	}
	return n, nil
}

// name splits a host name into a prefix and a numeric suffix.
type name struct {
	full   string
	prefix string
	digits string // "" when the name does not end in a digit
	num    uint64
}

func split(s string) name {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n := name{full: s, prefix: s[:i], digits: s[i:]}
	if n.digits != "" {
		v, err := strconv.ParseUint(n.digits, 10, 63)
		if err != nil || len(n.digits) > 18 {
			return name{full: s, prefix: s} // absurd number: treat as plain
		}
		n.num = v
	}
	return n
}

// padded reports whether the number is written with leading zeros.
func (n name) padded() bool { return len(n.digits) > 1 && n.digits[0] == '0' }

// Less orders names by prefix, then by number (node2 < node10), then by
// spelling (n01 < n1).
func Less(a, b string) bool {
	x, y := split(a), split(b)
	if x.prefix != y.prefix {
		return x.prefix < y.prefix
	}
	if (x.digits == "") != (y.digits == "") {
		return x.digits == ""
	}
	if x.num != y.num {
		return x.num < y.num
	}
	return a < b
}

// Compare is Less as a three-way comparison, for slices.SortFunc and
// slices.BinarySearchFunc.
func Compare(a, b string) int {
	switch {
	case a == b:
		return 0
	case Less(a, b):
		return -1
	}
	return 1
}

// Sort sorts names in place with Less.
func Sort(names []string) { sort.Slice(names, func(i, j int) bool { return Less(names[i], names[j]) }) }

// Compress returns the shortest hostlist expression for names (duplicates
// dropped, sorted with Less): {"n1","n2","n3","n7","gpu01"} -> "gpu01,n[1-3,7]".
// Expand(Compress(x)) yields the same set of names as x.
func Compress(names []string) string {
	type group struct {
		prefix string
		width  int // 0 = unpadded numbers
		nums   []uint64
	}
	parsed := make([]name, 0, len(names))
	seen := make(map[string]bool)
	paddedWidths := make(map[string]map[int]bool)
	for _, s := range names {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		n := split(s)
		parsed = append(parsed, n)
		if n.padded() {
			if paddedWidths[n.prefix] == nil {
				paddedWidths[n.prefix] = map[int]bool{}
			}
			paddedWidths[n.prefix][len(n.digits)] = true
		}
	}
	groups := make(map[string]*group)
	var order []*group
	var plain []string
	for _, n := range parsed {
		if n.digits == "" {
			plain = append(plain, n.full)
			continue
		}
		width := 0
		// "n10" joins the "n[08-09]" group: it prints the same with %02d.
		if n.padded() || paddedWidths[n.prefix][len(n.digits)] {
			width = len(n.digits)
		}
		key := n.prefix + "\x00" + strconv.Itoa(width)
		g := groups[key]
		if g == nil {
			g = &group{prefix: n.prefix, width: width}
			groups[key] = g
			order = append(order, g)
		}
		g.nums = append(g.nums, n.num)
	}
	type piece struct{ sortKey, text string }
	var pieces []piece
	for _, p := range plain {
		pieces = append(pieces, piece{p, p})
	}
	for _, g := range order {
		sort.Slice(g.nums, func(i, j int) bool { return g.nums[i] < g.nums[j] })
		first := fmt.Sprintf("%s%0*d", g.prefix, g.width, g.nums[0])
		if len(g.nums) == 1 {
			pieces = append(pieces, piece{first, first})
			continue
		}
		var b strings.Builder
		b.WriteString(g.prefix)
		b.WriteByte('[')
		for i := 0; i < len(g.nums); {
			j := i
			for j+1 < len(g.nums) && g.nums[j+1] == g.nums[j]+1 {
				j++
			}
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%0*d", g.width, g.nums[i])
			if j > i {
				fmt.Fprintf(&b, "-%0*d", g.width, g.nums[j])
			}
			i = j + 1
		}
		b.WriteByte(']')
		pieces = append(pieces, piece{first, b.String()})
	}
	sort.SliceStable(pieces, func(i, j int) bool { return Less(pieces[i].sortKey, pieces[j].sortKey) })
	out := make([]string, len(pieces))
	for i, p := range pieces {
		out[i] = p.text
	}
	return strings.Join(out, ",")
}
