package ctld

import (
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Absolute bounds on what one job may ask for, whatever the partitions
// say. They hold even before any node has registered (when fitsSomewhere
// accepts anything), so an absurd request is refused at submit instead of
// pending forever or overflowing arithmetic in the planner and the ledger.
const (
	MaxJobCPUs      = 1 << 16                   // CPUs per node
	MaxJobNodes     = 1 << 16                   // nodes per job
	MaxJobMemBytes  = 1 << 50                   // 1 PiB per node
	MaxJobTimeLimit = int64(366 * 24 * 3600)    // a year and a day, in seconds
	MaxJobGres      = 1 << 16                   // count of one --gres/--gpus entry
	MaxJobNice      = 2147483645                // Slurm's bound on --nice
	maxBeginAhead   = 10 * 366 * 24 * time.Hour // --begin at most ten years ahead
	maxListEntries  = 1 << 16                   // env, args, mounts, gres entries
	maxFieldBytes   = 64 << 10                  // one string field other than the script
)

// checkAbsurd refuses values no real job asks for, with one line naming
// the field, what was given and the bound.
func checkAbsurd(spec *api.JobSpec, now time.Time) error {
	bad := func(format string, args ...any) error { return errorf(http.StatusBadRequest, format, args...) }
	ints := []struct {
		name      string
		v, lo, hi int64
	}{
		{"cpus", int64(spec.CPUs), 0, MaxJobCPUs},
		{"nodes", int64(spec.Nodes), 0, MaxJobNodes},
		{"mem_bytes", spec.MemBytes, 0, MaxJobMemBytes},
		{"shm_bytes", spec.ShmBytes, 0, MaxJobMemBytes},
		{"mem_per_cpu_bytes", spec.MemPerCPU, 0, MaxJobMemBytes},
		{"mem_per_gpu_bytes", spec.MemPerGPU, 0, MaxJobMemBytes},
		{"time_limit_s", spec.TimeLimit, 0, MaxJobTimeLimit},
		{"cpus_per_task", int64(spec.CPUsPerTask), 0, MaxJobCPUs},
		{"cpus_per_gpu", int64(spec.CPUsPerGPU), 0, MaxJobCPUs},
		{"ntasks", int64(spec.Ntasks), 0, MaxJobCPUs * MaxJobNodes},
		{"ntasks_per_node", int64(spec.NtasksPerNode), 0, MaxJobCPUs},
		{"nice", int64(spec.Nice), -MaxJobNice, MaxJobNice},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return bad("%s=%d is out of range: it must be between %d and %d", f.name, f.v, f.lo, f.hi)
		}
	}
	for name, list := range map[string][]api.GresRequest{"gres": spec.Gres, "gpus": spec.GPUs,
		"gpus_per_node": spec.GPUsPerNode, "gpus_per_task": spec.GPUsPerTask} {
		if len(list) > maxListEntries {
			return bad("%s has %d entries; at most %d are allowed", name, len(list), maxListEntries)
		}
		for _, g := range list {
			if g.Count < 0 || g.Count > MaxJobGres {
				return bad("%s %s count %d is out of range: it must be between 0 and %d", name, g.Name, g.Count, MaxJobGres)
			}
		}
	}
	for name, n := range map[string]int{"env": len(spec.Env), "args": len(spec.Args), "mounts": len(spec.Mounts)} {
		if n > maxListEntries {
			return bad("%s has %d entries; at most %d are allowed", name, n, maxListEntries)
		}
	}
	for name, v := range map[string]string{"name": spec.Name, "partition": spec.Partition, "output": spec.Output,
		"error": spec.Error, "input": spec.Input, "work_dir": spec.WorkDir, "constraint": spec.Constraint,
		"account": spec.Account, "qos": spec.QOS, "comment": spec.Comment, "container_image": spec.ContainerImage} {
		if len(v) > maxFieldBytes {
			return bad("%s is %d bytes long; at most %d are allowed", name, len(v), maxFieldBytes)
		}
	}
	if spec.Begin != nil && spec.Begin.After(now.Add(maxBeginAhead)) {
		return bad("begin time %s is more than ten years ahead", spec.Begin.Format(time.RFC3339))
	}
	return nil
}
