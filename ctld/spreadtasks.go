package ctld

import "github.com/corral-hpc/corral/api"

// spreadTasks gives a job of several tasks without a node count (-n
// without -N) the nodes its tasks need, as Slurm spreads them: the fewest
// whose even share of the tasks fits a known node of the partition
// (-n 4 on nodes of 2 CPUs is 2 nodes of 2 tasks; -n 3 is 2 nodes, 2
// tasks and 1). A job that fits one node keeps one. With -w it is shaped
// for the listed nodes, which it gets all of. Left alone: jobs with a
// node count, --ntasks-per-node, GPU options, or a per-node CPU count the
// tasks alone do not explain (--mincpus, --cpus-per-gpu); for those the
// job's shape is what they asked.
func spreadTasks(a *admission, spec *api.JobSpec) error {
	perTask := max(spec.CPUsPerTask, 1)
	if a.part.Name == "" || spec.Nodes != 0 || spec.Ntasks <= 1 || spec.NtasksPerNode > 0 ||
		spec.CPUs != perTask*spec.Ntasks || len(a.known) == 0 || usesGPUs(spec) {
		return nil
	}
	least := max(1, len(spec.NodeList))
	if least == 1 && a.holds(spec, spec.CPUs) > 0 {
		return nil
	}
	for n := least; n <= spec.Ntasks; n++ {
		cpus := perTask * ceilDiv(spec.Ntasks, n)
		if a.holds(spec, cpus) < n {
			continue
		}
		spec.Nodes, spec.CPUs = n, cpus
		if spec.MemPerCPU > 0 {
			spec.MemBytes = spec.MemPerCPU * int64(cpus)
		}
		return nil
	}
	return nil // no shape fits: the fit check says why, for the one asked
}

// holds counts the known nodes of the job's partition that could hold
// cpus CPUs of it, with the memory it would get for them.
func (a *admission) holds(spec *api.JobSpec, cpus int) int {
	var mem int64
	switch {
	case spec.MemWholeNode:
	case spec.MemPerCPU > 0:
		mem = spec.MemPerCPU * int64(cpus)
	case spec.MemBytes > 0:
		mem = spec.MemBytes
	default: // as setDefaults will fill it in
		mem = int64(cpus) * memPerCPU(a.part, a.known)
	}
	n := 0
	for _, k := range a.known {
		if cpus <= k.rec.CPUs && mem <= k.rec.MemBytes {
			n++
		}
	}
	return n
}

// usesGPUs reports whether the job asks for GPUs in any form.
func usesGPUs(spec *api.JobSpec) bool {
	return len(spec.Gres) > 0 || len(spec.GPUs) > 0 || len(spec.GPUsPerNode) > 0 || len(spec.GPUsPerTask) > 0 ||
		spec.FGPUHundredths > 0 || spec.CPUsPerGPU > 0 || spec.MemPerGPU > 0
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
