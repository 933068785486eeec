package jobspec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// MaxDependencies bounds the jobs one --dependency may name, so that a
// typo like 1_[0-4000000] cannot make a huge request.
const MaxDependencies = 10000

const dependencyHint = "use TYPE:JOBID[:JOBID...] joined by , (all) or ? (any), " +
	"with TYPE after, afterany, afterok, afternotok or aftercorr, or singleton"

// ParseDependency reads a --dependency list as sbatch does:
//
//	afterok:20:21,afterany:23     all conditions must hold
//	afterok:20?afternotok:21      any one condition is enough
//	after:20+10                   10 minutes after job 20 started
//	singleton                     no other job of this name and user running
//	20,21                         the old form: afterany:20:21
//
// Job IDs may name an array task (123_4), every task (123_* or 123) or a
// list of tasks (123_[1-3,7]). Type names are case-insensitive.
// afterburstbuffer is read as afterany, since corral has no burst buffers,
// and bb reports that it was. An empty list or "0" means no dependency
// (nil), which lets a command line clear a script's.
func ParseDependency(s string) (d *api.Dependency, bb bool, err error) {
	d, bb, err = parseDependency(s)
	if err != nil {
		return nil, false, fmt.Errorf("invalid --dependency %s: %v", quoteValue(s), err)
	}
	return d, bb, nil
}

func parseDependency(s string) (*api.Dependency, bool, error) {
	if s == "" || s == "0" {
		return nil, false, nil
	}
	and, or := splitOutsideBrackets(s, ','), splitOutsideBrackets(s, '?')
	if len(and) > 1 && len(or) > 1 {
		return nil, false, fmt.Errorf("use either , (all must hold) or ? (any is enough), not both")
	}
	hasOr := len(or) > 1
	d := &api.Dependency{Any: hasOr}
	parts := and
	if hasOr {
		parts = or
	}
	bb := false
	for _, part := range parts {
		if part == "" {
			return nil, false, fmt.Errorf("empty condition: %s", dependencyHint)
		}
		conds, wasBB, err := parseCondition(part, !hasOr)
		if err != nil {
			return nil, false, err
		}
		bb = bb || wasBB
		d.Conditions = append(d.Conditions, conds...)
		if len(d.Conditions) > MaxDependencies {
			return nil, false, fmt.Errorf("more than %d jobs", MaxDependencies)
		}
	}
	return d, bb, nil
}

// parseCondition reads one TYPE:ID[:ID...], singleton or (the old form,
// only in a ","-list) a bare job ID.
func parseCondition(part string, andList bool) ([]api.DependencyCondition, bool, error) {
	if strings.EqualFold(part, "singleton") {
		return []api.DependencyCondition{{Type: api.DependSingleton}}, false, nil
	}
	name, ids, hasIDs := strings.Cut(part, ":")
	if !hasIDs {
		if part[0] >= '0' && part[0] <= '9' && andList {
			return parseJobRefs(api.DependAfterAny, part)
		}
		if strings.HasPrefix(strings.ToLower(part), "singleton") {
			return nil, false, fmt.Errorf("singleton takes no job IDs")
		}
		return nil, false, fmt.Errorf("%q has no job ID: %s", part, dependencyHint)
	}
	var typ api.DependencyType
	bb := false
	switch strings.ToLower(name) {
	case "after":
		typ = api.DependAfter
	case "afterany":
		typ = api.DependAfterAny
	case "afterok":
		typ = api.DependAfterOK
	case "afternotok":
		typ = api.DependAfterNotOK
	case "aftercorr":
		typ = api.DependAfterCorr
	case "afterburstbuffer":
		typ, bb = api.DependAfterAny, true
	case "singleton":
		return nil, false, fmt.Errorf("singleton takes no job IDs")
	default:
		return nil, false, fmt.Errorf("unknown dependency type %q: %s", name, dependencyHint)
	}
	conds, _, err := parseJobRefs(typ, ids)
	return conds, bb, err
}

// parseJobRefs reads ID[+minutes][:ID[+minutes]...]; the delay is only
// for after.
func parseJobRefs(typ api.DependencyType, s string) ([]api.DependencyCondition, bool, error) {
	var out []api.DependencyCondition
	for _, ref := range splitOutsideBrackets(s, ':') {
		ref, delayText, hasDelay := strings.Cut(ref, "+")
		id, tasks, err := parseJobRef(ref)
		if err != nil {
			return nil, false, err
		}
		var delay int64
		if hasDelay {
			if typ != api.DependAfter {
				return nil, false, fmt.Errorf("+time is only allowed with after (in %s:%s)", typ, s)
			}
			n, ok := parseCount(delayText)
			if !ok || n < 1 || n > 100*366*24*60 {
				return nil, false, fmt.Errorf("delay %q after job %s must be a number of minutes from 1", delayText, ref)
			}
			delay = n * 60
		}
		if tasks == nil {
			out = append(out, api.DependencyCondition{Type: typ, JobID: id, Delay: delay})
		}
		for _, t := range tasks {
			out = append(out, api.DependencyCondition{Type: typ, JobID: id, ArrayTask: &t, Delay: delay})
			if len(out) > MaxDependencies {
				return nil, false, fmt.Errorf("more than %d jobs", MaxDependencies)
			}
		}
	}
	return out, false, nil
}

// splitOutsideBrackets splits s at sep, except inside the brackets of a
// task list like 123_[1,2].
func splitOutsideBrackets(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseJobRef reads 123, 123_4, 123_* or 123_[1-3,7]. tasks is nil for the
// whole job.
func parseJobRef(ref string) (uint64, []int, error) {
	idText, task, hasTask := strings.Cut(ref, "_")
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil || id == 0 || !allDigits(idText) {
		return 0, nil, fmt.Errorf("%q is not a job ID: %s", ref, dependencyHint)
	}
	switch {
	case !hasTask || task == "*":
		return id, nil, nil
	case strings.HasPrefix(task, "[") && strings.HasSuffix(task, "]"):
		a, _, err := parseArray(task[1 : len(task)-1])
		if err != nil || a.MaxRunning != 0 {
			return 0, nil, fmt.Errorf("bad task list in %q: use 123_[1-3,7]", ref)
		}
		if a.Count() > MaxDependencies {
			return 0, nil, fmt.Errorf("more than %d jobs", MaxDependencies)
		}
		return id, a.Indexes(), nil
	}
	t, err := arrayIndex(task)
	if err != nil {
		return 0, nil, fmt.Errorf("bad array task in %q: %v", ref, err)
	}
	return id, []int{t}, nil
}

// FormatDependency prints a dependency in sbatch's syntax; ParseDependency
// of the result gives the same conditions. nil prints as "".
func FormatDependency(d *api.Dependency) string {
	if d == nil {
		return ""
	}
	parts := make([]string, 0, len(d.Conditions))
	for _, c := range d.Conditions {
		if c.Type == api.DependSingleton {
			parts = append(parts, string(c.Type))
			continue
		}
		ref := strconv.FormatUint(c.JobID, 10)
		if c.ArrayTask != nil {
			ref += "_" + strconv.Itoa(*c.ArrayTask)
		}
		if c.Delay > 0 {
			ref += "+" + strconv.FormatInt((c.Delay+59)/60, 10)
		}
		parts = append(parts, string(c.Type)+":"+ref)
	}
	sep := ","
	if d.Any {
		sep = "?"
	}
	return strings.Join(parts, sep)
}
