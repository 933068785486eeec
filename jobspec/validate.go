package jobspec

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// Absolute bounds on what one job may ask for, whatever the partitions
// say. They hold even before any node has registered (when the
// controller cannot judge fit), so an absurd request is refused at submit
// instead of pending forever or overflowing arithmetic in the planner and
// the ledger.
const (
	MaxCPUs         = 1 << 16                // CPUs per node
	MaxNodes        = 1 << 16                // nodes per job
	MaxMemBytes     = 1 << 50                // 1 PiB per node
	MaxTimeLimit    = int64(366 * 24 * 3600) // a year and a day, in seconds
	MaxGres         = 1 << 16                // count of one --gres/--gpus entry
	MaxGPUsPerNode  = 1 << 16                // whole GPUs per node, far above any node
	MaxNice         = 2147483645             // Slurm's bound on --nice
	MaxSignal       = 64                     // --signal: the highest Linux signal
	MaxSignalBefore = 65535                  // --signal @seconds, as sbatch
	// maxBeginAhead: --begin at most ten years ahead.
	maxBeginAhead = 10 * 366 * 24 * time.Hour
)

// Validate returns every problem of spec that needs no cluster to judge,
// as api.Problems, each one line naming the option or field, or nil. The
// CLI applies it before sending a job, the controller on every submit and
// --test-only (both as api.CheckSizes over the request, then
// ValidateRules), so both refuse the same jobs with the same words. Rules
// that need the cluster (partitions, nodes, accounts, other jobs) are the
// controller's.
//
// It judges the spec as sent: fields the controller fills (partition,
// nodes, name, time limit, memory, account) may be empty.
func Validate(spec *api.JobSpec) error { return validate(spec, time.Now(), true) }

// ValidateRules is Validate without the size walk (api.CheckSizes), for a
// caller that has already walked the whole request the spec came in: the
// controller walks every user-plane body as it decodes it, and corral
// submit walks what it sends. The walk is most of the cost of a valid
// spec (about 10 µs for one with 60 environment entries), so it is done
// once per submit.
func ValidateRules(spec *api.JobSpec) error { return validate(spec, time.Now(), false) }

func validate(spec *api.JobSpec, now time.Time, sizes bool) error {
	var p api.Problems
	bad := func(format string, args ...any) { p = append(p, fmt.Errorf(format, args...)) }
	// A script over its size is the size walk's to report.
	switch {
	case spec.Allocation: // salloc's: its client runs the work
		if spec.Script != "" {
			bad("an allocation (salloc) has no batch script")
		}
		if spec.Array != nil {
			bad("an allocation (salloc) cannot be a job array")
		}
	case len(spec.Script) <= api.MaxScriptBytes:
		if err := api.ValidateScript("script", spec.Script); err != nil {
			p = append(p, err)
		}
	}
	for _, f := range []struct {
		name      string
		v, lo, hi int64
		low       string // the refusal below lo, if not the range's
	}{
		{"cpus", int64(spec.CPUs), 1, MaxCPUs, "cpus must be at least 1 (got %d)"},
		{"nodes", int64(spec.Nodes), 0, MaxNodes, "nodes must be at least 1 (got %d)"},
		{"mem_bytes", spec.MemBytes, 0, MaxMemBytes, "memory must not be negative (got %d bytes)"},
		{"shm_bytes", spec.ShmBytes, 0, MaxMemBytes, "shm size must not be negative (got %d bytes)"},
		{"mem_per_cpu_bytes", spec.MemPerCPU, 0, MaxMemBytes, ""},
		{"mem_per_gpu_bytes", spec.MemPerGPU, 0, MaxMemBytes, ""},
		{"time_limit_s", spec.TimeLimit, 0, MaxTimeLimit, "time limit must not be negative (got %d seconds)"},
		{"cpus_per_task", int64(spec.CPUsPerTask), 0, MaxCPUs, ""},
		{"cpus_per_gpu", int64(spec.CPUsPerGPU), 0, MaxCPUs, ""},
		{"ntasks", int64(spec.Ntasks), 0, MaxCPUs * MaxNodes, ""},
		{"ntasks_per_node", int64(spec.NtasksPerNode), 0, MaxCPUs, ""},
		{"nice", int64(spec.Nice), -MaxNice, MaxNice, ""},
	} {
		switch {
		case f.v < f.lo && f.low != "":
			bad(f.low, f.v)
		case f.v < f.lo || f.v > f.hi:
			// Below lo has its own line where there is one, so the
			// range names 0 for cpus, as it always has.
			bad("%s=%d is out of range: it must be between %d and %d", f.name, f.v, min(f.lo, 0), f.hi)
		}
	}
	if spec.WorkDir == "" || !filepath.IsAbs(spec.WorkDir) {
		bad("work directory must be an absolute path (got %q)", spec.WorkDir)
	}
	if sizes {
		if err := api.CheckSizes(spec); err != nil { // every string and list, nested ones too
			p = append(p, err)
		}
	}
	gresOK := true
	for _, o := range []struct {
		name string
		list []api.GresRequest
	}{{"gres", spec.Gres}, {"gpus", spec.GPUs}, {"gpus_per_node", spec.GPUsPerNode}, {"gpus_per_task", spec.GPUsPerTask}} {
		for _, g := range o.list {
			if g.Count < 0 || g.Count > MaxGres {
				bad("%s %s count %d is out of range: it must be between 0 and %d", o.name, g.Name, g.Count, MaxGres)
				gresOK = false
			}
		}
	}
	if spec.Begin != nil && spec.Begin.After(now.Add(maxBeginAhead)) {
		bad("begin time %s is more than ten years ahead", spec.Begin.Format(time.RFC3339))
	}
	if _, err := api.ParseUmask(spec.Umask); err != nil {
		p = append(p, err)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			bad("environment entry %q is not KEY=VALUE", kv)
			break // one is enough: the rest is the same mistake
		}
	}
	p = append(p, arrayProblems(spec.Array)...)
	p = append(p, dependencyProblems(spec.Dependency)...)
	if sig := spec.Signal; sig != nil && (sig.Signal < 1 || sig.Signal > MaxSignal || sig.Before < 0 || sig.Before > MaxSignalBefore) {
		bad("invalid --signal: signal %d must be 1 to %d and the time before the limit 0 to %d seconds (got %d)",
			sig.Signal, MaxSignal, MaxSignalBefore, sig.Before)
	}
	if e := spec.Export; e != nil {
		switch e.Mode {
		case api.ExportAll, api.ExportNone, api.ExportNil, api.ExportList:
		default:
			bad("invalid --export mode %q (valid: ALL, NONE, NIL, LIST)", e.Mode)
		}
		for _, v := range e.Vars {
			if name, _, _ := strings.Cut(v, "="); !ValidEnvName(name) {
				bad("invalid --export entry %q: %q is not a variable name", v, name)
				break
			}
		}
	}
	switch spec.OpenMode {
	case "", "append", "truncate":
	default:
		bad("invalid --open-mode %q (valid: append, truncate)", spec.OpenMode)
	}
	if spec.Input != "" && (strings.ContainsAny(spec.Input, "\x00\n") || strings.TrimSpace(spec.Input) == "") {
		bad("invalid --input %q: give a file name pattern", spec.Input)
	}
	if spec.Name != "" { // the controller names a job without one
		if err := CheckJobName(spec.Name); err != nil {
			p = append(p, err)
		}
	}
	if spec.Constraint != "" {
		if _, err := ParseConstraint(spec.Constraint); err != nil {
			p = append(p, err)
		}
	}
	p = append(p, sharingProblems(spec)...)
	if both := nodesInBoth(spec.NodeList, spec.Exclude); len(both) > 0 {
		bad("--nodelist and --exclude both name %s", strings.Join(both, ","))
	}
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) || filepath.Clean(m.Target) == "/" {
			bad("invalid --mount %s:%s: use absolute paths, not the container's root", m.Source, m.Target)
		}
	}
	p = append(p, appProblems(spec.Apps)...)
	if gresOK && len(p) == 0 {
		// The GPU rules combine counts judged above: a bad count would
		// be reported twice.
		if err := gpuProblem(spec); err != nil {
			p = append(p, err)
		}
	}
	return p.Err()
}

// gpuProblem judges how a spec's GPU options combine.
func gpuProblem(spec *api.JobSpec) error {
	n, _, err := PerNodeGPUs(spec)
	switch {
	case err != nil:
		return err
	case spec.FGPUHundredths < 0 || spec.FGPUHundredths > gpu.MaxFGPU*int(gpu.One):
		return fmt.Errorf("fGPU per node must be between 0.01 and %d (got %s)", gpu.MaxFGPU, gpu.Hundredths(spec.FGPUHundredths))
	case spec.FGPUHundredths > 0 && n > 0:
		return fmt.Errorf("--fgpu and whole GPUs (--gpus, --gres=gpu, --gpus-per-node, --gpus-per-task) are mutually exclusive")
	case n > MaxGPUsPerNode:
		return fmt.Errorf("job asks for %d GPUs per node, more than the limit of %d", n, MaxGPUsPerNode)
	}
	return nil
}

// arrayProblems judges --array's shape; how many tasks a cluster allows
// is the controller's rule.
func arrayProblems(a *api.JobArray) []error {
	if a == nil {
		return nil
	}
	if len(a.Ranges) == 0 {
		return []error{fmt.Errorf("invalid --array: no indexes")}
	}
	var p []error
	prev := -1
	for _, r := range a.Ranges {
		if r.Step < 1 || r.First < 0 || r.Last < r.First || r.Last > MaxArrayIndex || r.First <= prev {
			p = append(p, fmt.Errorf("invalid --array: ranges must be sorted, disjoint and within 0-%d with steps of at least 1 (got %d-%d:%d)",
				MaxArrayIndex, r.First, r.Last, r.Step))
			break
		}
		prev = r.Last
	}
	if a.MaxRunning < 0 {
		p = append(p, fmt.Errorf("invalid --array: the %%N running limit must not be negative (got %d)", a.MaxRunning))
	}
	return p
}

// dependencyProblems judges --dependency's shape; whether the jobs it
// names exist is the controller's rule.
func dependencyProblems(d *api.Dependency) []error {
	if d == nil {
		return nil
	}
	bad := func(format string, args ...any) []error {
		return []error{fmt.Errorf("invalid --dependency: "+format, args...)}
	}
	if len(d.Conditions) == 0 {
		return bad("no conditions")
	}
	for _, c := range d.Conditions {
		switch c.Type {
		case api.DependSingleton:
			if c.JobID != 0 || c.ArrayTask != nil {
				return bad("singleton names no job")
			}
			continue
		case api.DependAfter, api.DependAfterAny, api.DependAfterOK, api.DependAfterNotOK, api.DependAfterCorr:
		default:
			return bad("unknown type %q (valid: after, afterany, afterok, afternotok, aftercorr, singleton)", c.Type)
		}
		switch {
		case c.JobID == 0:
			return bad("%s needs a job ID", c.Type)
		case c.Delay < 0 || c.Delay > 0 && c.Type != api.DependAfter:
			return bad("a delay (+minutes) is only allowed with after, and must not be negative")
		}
	}
	return nil
}
