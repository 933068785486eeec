package cli

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

// sacctFilters are sacct's filters on what the runs were, applied to the
// rows the controller sends (sacct(1)): -i/--nnodes and -I/--ncpus
// (N or MIN-MAX; --ncpus counts every node's CPUs), -k/--timelimit-min
// and -K/--timelimit-max, -q/--qos (a job without --qos has Slurm's
// default, normal), --uid, -g/--gid and --group (names or numbers),
// -R/--reason and --constraints. The last five read the job's own record,
// which the controller keeps while it keeps the job: a run of a job it
// no longer has passes none of them.
type sacctFilters struct {
	nodes, cpus          *countRange
	limitMin, limitMax   int64 // seconds; -1: none
	qos, reasons, constr []string
	uids, gids           []uint32
}

// countRange is N (exactly) or MIN-MAX.
type countRange struct{ min, max int }

func (c *countRange) has(n int) bool { return c == nil || n >= c.min && n <= c.max }

func parseSacctFilters(r *slurmopt.Result) (*sacctFilters, error) {
	f := &sacctFilters{limitMin: -1, limitMax: -1}
	var err error
	if f.nodes, err = parseCountRange(r, "nnodes"); err != nil {
		return nil, err
	}
	if f.cpus, err = parseCountRange(r, "ncpus"); err != nil {
		return nil, err
	}
	for _, lim := range []struct {
		name string
		to   *int64
	}{{"timelimit-min", &f.limitMin}, {"timelimit-max", &f.limitMax}} {
		if v, ok := r.Last(lim.name); ok {
			if *lim.to, err = jobspec.ParseTimeLimit(v); err != nil {
				return nil, fmt.Errorf("invalid --%s %q: %v", lim.name, v, err)
			}
			if *lim.to == 0 { // UNLIMITED: no bound
				*lim.to = -1
			}
		}
	}
	f.qos = commaList(r.All("qos"))
	f.reasons = commaList(r.All("reason"))
	f.constr = commaList(r.All("constraints"))
	for _, u := range commaList(r.All("uid")) {
		id, err := lookupUID(u) // submit.go
		if err != nil {
			return nil, err
		}
		f.uids = append(f.uids, id)
	}
	for _, g := range append(commaList(r.All("gid")), commaList(r.All("group"))...) {
		id, err := lookupGID(g)
		if err != nil {
			return nil, err
		}
		f.gids = append(f.gids, id)
	}
	return f, nil
}

func parseCountRange(r *slurmopt.Result, name string) (*countRange, error) {
	v, ok := r.Last(name)
	if !ok {
		return nil, nil
	}
	a, b, ok := intRange(v)
	if !ok {
		return nil, fmt.Errorf("invalid --%s %q: give N or MIN-MAX", name, v)
	}
	return &countRange{a, b}, nil
}

// intRange reads N (N to N) or MIN-MAX, from 0, MIN no more than MAX.
func intRange(v string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(v, "-")
	lo, errA := strconv.Atoi(a)
	hi = lo
	var errB error
	if isRange {
		hi, errB = strconv.Atoi(b)
	}
	return lo, hi, errA == nil && errB == nil && lo >= 0 && hi >= lo
}

// needJob: a filter reads the job's own record.
func (f *sacctFilters) needJob() bool {
	return f.limitMin >= 0 || f.limitMax >= 0 || len(f.qos)+len(f.reasons)+len(f.constr)+len(f.gids) > 0
}

func (f *sacctFilters) keep(row *slurmfmt.AcctRow) bool {
	rec := &row.Rec
	if !f.nodes.has(rec.NodeCount) || !f.cpus.has(rec.CPUs*max(rec.NodeCount, 1)) ||
		len(f.uids) > 0 && !slices.Contains(f.uids, rec.UID) {
		return false
	}
	if !f.needJob() {
		return true
	}
	j := row.Job
	if j == nil {
		return false
	}
	qos := j.Spec.QOS
	if qos == "" {
		qos = "normal"
	}
	limit := j.TimeLimit
	if limit == 0 { // UNLIMITED: above any bound
		limit = math.MaxInt64
	}
	return (f.limitMin < 0 || limit >= f.limitMin) && (f.limitMax < 0 || limit <= f.limitMax) &&
		(len(f.qos) == 0 || slices.ContainsFunc(f.qos, func(q string) bool { return strings.EqualFold(q, qos) })) &&
		(len(f.reasons) == 0 || slices.ContainsFunc(f.reasons, func(r string) bool { return strings.EqualFold(r, string(j.Reason)) })) &&
		(len(f.constr) == 0 || slices.ContainsFunc(f.constr, func(c string) bool { return strings.Contains(j.Spec.Constraint, c) })) &&
		(len(f.gids) == 0 || slices.Contains(f.gids, j.GID))
}
