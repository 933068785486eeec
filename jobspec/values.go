package jobspec

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// This file reads the values of the options whose syntax is more than a
// number, a size or a name: --export, --signal, --gres, --gpus*, --nodes,
// --mount and --container-image.

// ParseExport reads --export: ALL, NONE, NIL, or a comma-separated list of
// NAME (pass the submitter's value) and NAME=value, optionally led by ALL.
// Plain ALL is the default and returns nil. A comma inside quotes does not
// split ("A='x,y'"), and quotes around a whole entry are removed, as sbatch
// does.
func ParseExport(s string) (*api.EnvExport, error) {
	e, err := parseExport(s)
	if err != nil {
		return nil, fmt.Errorf("invalid --export %s: %v", quoteValue(s), err)
	}
	return e, nil
}

func parseExport(s string) (*api.EnvExport, error) {
	switch strings.ToUpper(s) {
	case "ALL":
		return nil, nil
	case "NONE":
		return &api.EnvExport{Mode: api.ExportNone}, nil
	case "NIL":
		return &api.EnvExport{Mode: api.ExportNil}, nil
	case "":
		return nil, fmt.Errorf("use ALL, NONE, NIL or a list like NAME,NAME=value")
	}
	e := &api.EnvExport{Mode: api.ExportList}
	entries, err := splitQuoted(s, ',')
	if err != nil {
		return nil, err
	}
	for _, v := range entries {
		name, _, _ := strings.Cut(v, "=")
		switch {
		case strings.EqualFold(v, "ALL"):
			e.Mode = api.ExportAll
			continue
		case strings.EqualFold(v, "NONE") || strings.EqualFold(v, "NIL"):
			return nil, fmt.Errorf("%s cannot be combined with variables", strings.ToUpper(v))
		case !ValidEnvName(name):
			return nil, fmt.Errorf("%q is not a variable name (in %q)", name, v)
		}
		e.Vars = append(e.Vars, v)
	}
	if e.Mode == api.ExportAll && len(e.Vars) == 0 {
		return nil, nil // "ALL,ALL" is plain ALL
	}
	return e, nil
}

// splitQuoted splits at sep outside single and double quotes and strips
// quotes that enclose a whole entry.
func splitQuoted(s string, sep byte) ([]string, error) {
	var out []string
	var quote byte
	start := 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i < len(s) && quote != 0:
			if s[i] == quote {
				quote = 0
			}
		case i < len(s) && (s[i] == '\'' || s[i] == '"'):
			quote = s[i]
		case i == len(s) || s[i] == sep:
			v := s[start:i]
			if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			if v == "" {
				return nil, fmt.Errorf("empty entry in the list")
			}
			out = append(out, v)
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	return out, nil
}

// ValidEnvName accepts what a POSIX shell can export: a letter or _, then
// letters, digits and _. The controller judges --export entries with it too.
func ValidEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// linuxSignals are the names sbatch accepts for --signal, with their Linux
// numbers.
var linuxSignals = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
	"ALRM": 14, "TERM": 15, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21,
	"TTOU": 22, "URG": 23, "XCPU": 24,
}

const signalHint = "use [B:]SIGNAL[@SECONDS], SIGNAL a number from 1 to 64 or a name like USR1 or SIGTERM"

// ParseSignal reads --signal [{R|B}:]SIG[@SECONDS]: send SIG (a number or
// a name, with or without SIG) SECONDS (default 60, at most 65535) before
// the time limit; B: signals only the batch shell. R: (overlap a
// reservation) means nothing without reservations: resv reports it so the
// caller can warn.
func ParseSignal(s string) (sig api.JobSignal, resv bool, err error) {
	sig, resv, err = parseSignal(s)
	if err != nil {
		return api.JobSignal{}, false, fmt.Errorf("invalid --signal %s: %v", quoteValue(s), err)
	}
	return sig, resv, nil
}

func parseSignal(s string) (api.JobSignal, bool, error) {
	sig := api.JobSignal{Before: 60}
	resv := false
	if flags, rest, ok := strings.Cut(s, ":"); ok {
		for _, f := range strings.ToUpper(flags) {
			switch f {
			case 'B':
				sig.BatchOnly = true
			case 'R':
				resv = true
			default:
				return sig, false, fmt.Errorf("unknown flag %q before ':': %s", f, signalHint)
			}
		}
		s = rest
	}
	name, before, hasBefore := strings.Cut(s, "@")
	if hasBefore {
		n, ok := parseCount(before)
		if !ok || n > MaxSignalBefore {
			return sig, false, fmt.Errorf("the time after @ must be 0 to %d seconds: %s", MaxSignalBefore, signalHint)
		}
		sig.Before = int(n)
	}
	if n, ok := parseCount(name); ok {
		if n < 1 || n > MaxSignal {
			return sig, false, fmt.Errorf("signal %d does not exist: %s", n, signalHint)
		}
		sig.Signal = int(n)
		return sig, resv, nil
	}
	upper := strings.ToUpper(name)
	num, ok := linuxSignals[strings.TrimPrefix(upper, "SIG")]
	if !ok {
		return sig, false, fmt.Errorf("unknown signal %q: %s", name, signalHint)
	}
	sig.Signal = num
	return sig, resv, nil
}

// parseGres reads --gres: a comma-separated list of name[:type][:count],
// each optionally written gres/name. The count defaults to 1 and may carry
// a K, M, G, T or P suffix (powers of 1024). "none" is no GRES at all.
func parseGres(s string) ([]api.GresRequest, error) {
	if strings.EqualFold(s, "none") {
		return nil, nil
	}
	if s == "" || strings.EqualFold(s, "help") {
		// sbatch lists the cluster's GRES for "help"; corral submit knows
		// nothing about the cluster, so it says how to ask for one.
		return nil, fmt.Errorf("use name[:type][:count], as in gpu:2 or gpu:a100:2")
	}
	var out []api.GresRequest
	for _, entry := range strings.Split(s, ",") {
		fields := strings.Split(strings.TrimPrefix(entry, "gres/"), ":")
		g := api.GresRequest{Name: fields[0], Count: 1}
		rest := fields[1:]
		if len(rest) > 0 {
			if n, ok := parseGresCount(rest[len(rest)-1]); ok {
				g.Count = n
				rest = rest[:len(rest)-1]
			}
		}
		switch {
		case len(rest) > 1:
			return nil, fmt.Errorf("%q has too many fields: use name[:type][:count]", entry)
		case len(rest) == 1:
			g.Type = rest[0]
		}
		if !validGresName(g.Name) || g.Type != "" && !validGresName(g.Type) {
			return nil, fmt.Errorf("%q is not name[:type][:count] (names are letters, digits, _ . and -)", entry)
		}
		if g.Name == "gpu" && g.Count > maxCount {
			return nil, fmt.Errorf("%q asks for more than %d GPUs", entry, maxCount)
		}
		if err := addGres(&out, g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseGPUs reads --gpus, --gpus-per-node and --gpus-per-task:
// [type:]count, or a comma-separated list of them for several types.
func parseGPUs(s string) ([]api.GresRequest, error) {
	if s == "" {
		return nil, fmt.Errorf("use [type:]count, as in 4 or a100:4")
	}
	var out []api.GresRequest
	for _, entry := range strings.Split(s, ",") {
		g := api.GresRequest{Name: "gpu"}
		countText := entry
		typ, count, typed := strings.Cut(entry, ":")
		if typed {
			g.Type, countText = typ, count
		}
		n, ok := parseGresCount(countText)
		if !ok || n > maxCount || typed && !validGresName(g.Type) {
			return nil, fmt.Errorf("%q is not [type:]count, as in 4 or a100:4", entry)
		}
		g.Count = n
		if err := addGres(&out, g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addGres appends g unless its count is zero (gpu:0 asks for none), and
// refuses a name and type given twice.
func addGres(list *[]api.GresRequest, g api.GresRequest) error {
	for _, o := range *list {
		if o.Name == g.Name && o.Type == g.Type {
			what := g.Name
			if g.Type != "" {
				what += ":" + g.Type
			}
			return fmt.Errorf("%s is listed twice", what)
		}
	}
	if g.Count > 0 {
		*list = append(*list, g)
	}
	return nil
}

// parseGresCount reads a count with an optional K, M, G, T or P suffix.
func parseGresCount(s string) (int64, bool) {
	mult := int64(1)
	if s != "" {
		if i := strings.IndexByte("kmgtp", lower(s[len(s)-1])); i >= 0 {
			mult = 1 << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, ok := parseCount(s)
	if !ok || n > (1<<53)/mult {
		return 0, false
	}
	return n * mult, true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func validGresName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// gpuCount sums the GPUs in a GRES list.
func gpuCount(list []api.GresRequest) int64 {
	var n int64
	for _, g := range list {
		if g.Name == "gpu" {
			n += g.Count
		}
	}
	return n
}

const nodesHint = "use a count (2, 1k), a range MIN-MAX or a list like 1,5,9"

// parseNodes reads --nodes: N, MIN-MAX, or sbatch's size list (1,5,9 or
// 1-15:4). Counts may end in k or m (x1024, x1048576). It returns the
// smallest and largest count named.
func parseNodes(s string) (lo, hi int, err error) {
	lo = -1
	for _, tok := range strings.Split(s, ",") {
		span, step, hasStep := strings.Cut(tok, ":")
		a, b, isRange := strings.Cut(span, "-")
		first, ok := parseNodeCount(a)
		last := first
		if ok && isRange {
			last, ok = parseNodeCount(b)
		}
		if ok && hasStep {
			n, okStep := parseCount(step)
			ok = okStep && isRange && n >= 1
			if ok {
				last -= (last - first) % int(n)
			}
		}
		if !ok || last < first {
			return 0, 0, fmt.Errorf("invalid --nodes %s: %s", quoteValue(s), nodesHint)
		}
		if first < 1 {
			return 0, 0, fmt.Errorf("--nodes must be at least 1 (got %d)", first)
		}
		if lo < 0 || first < lo {
			lo = first
		}
		hi = max(hi, last)
	}
	return lo, hi, nil
}

func parseNodeCount(s string) (int, bool) {
	mult := int64(1)
	if s != "" {
		switch lower(s[len(s)-1]) {
		case 'k':
			mult, s = 1<<10, s[:len(s)-1]
		case 'm':
			mult, s = 1<<20, s[:len(s)-1]
		}
	}
	n, ok := parseCount(s)
	if !ok || n > (1<<31-1)/mult {
		return 0, false
	}
	return int(n * mult), true
}

// ParseMount reads corral's --mount SRC:DST[:ro|rw], as the dashboard's
// launch dialog takes it too.
func ParseMount(s string) (api.Mount, error) { return parseMount(s) }

// parseMount reads corral's --mount SRC:DST[:ro|rw]: both paths absolute.
func parseMount(s string) (api.Mount, error) {
	bad := func(why string) (api.Mount, error) {
		return api.Mount{}, fmt.Errorf("invalid --mount %s: %s", quoteValue(s), why)
	}
	fields := strings.Split(s, ":")
	if len(fields) < 2 || len(fields) > 3 {
		return bad("use SRC:DST or SRC:DST:ro with absolute paths")
	}
	m := api.Mount{Source: fields[0], Target: fields[1]}
	if len(fields) == 3 {
		switch strings.ToLower(fields[2]) {
		case "ro":
			m.ReadOnly = true
		case "rw":
		default:
			return bad(fmt.Sprintf("unknown mode %q: use ro or rw", fields[2]))
		}
	}
	for _, p := range []string{m.Source, m.Target} {
		switch {
		case !path.IsAbs(p):
			return bad(fmt.Sprintf("%q is not an absolute path", p))
		case path.Clean(p) != p && path.Clean(p)+"/" != p:
			return bad(fmt.Sprintf("%q is not a clean path (no //, . or ..)", p))
		case hasControl(p):
			return bad("control characters are not allowed")
		}
	}
	m.Source, m.Target = path.Clean(m.Source), path.Clean(m.Target)
	if m.Target == "/" {
		return bad("cannot mount over the container's root")
	}
	return m, nil
}

// validImage accepts an image reference: [registry[:port]/]name[:tag]
// [@digest], or enroot's registry#name form. It checks the characters,
// not that the image exists.
func validImage(s string) bool {
	if s == "" || len(s) > 512 || s[0] == '-' || s[0] == ':' || s[0] == '@' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/:@#+", c) >= 0) {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < ' ' || c == 0x7f {
			return true
		}
	}
	return false
}

// parseNice reads --nice's optional adjustment; none means 100.
func parseNice(s string) (int, error) {
	if s == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < -2147483645 || n > 2147483645 {
		return 0, fmt.Errorf("invalid --nice %s: use a whole number from -2147483645 to 2147483645", quoteValue(s))
	}
	return n, nil
}

// mailTypes are the events sbatch's --mail-type names (sbatch(1)).
var mailTypes = []string{"NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
	"TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"}

// checkMailType refuses a --mail-type list sbatch refuses: a word that
// names no event (in any case).
func checkMailType(v string) error {
	for _, w := range strings.Split(v, ",") {
		if !slices.Contains(mailTypes, strings.ToUpper(strings.TrimSpace(w))) {
			return badValue("mail-type", v, "use "+strings.Join(mailTypes, ", ")+" or a comma list of them")
		}
	}
	return nil
}
