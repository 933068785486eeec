package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/sched"
)

// Node sharing: --exclusive gives a job its nodes to itself, all their
// CPUs and GPUs; --exclusive=user shares them only with the same user's
// jobs; --mem=0 takes all of each node's memory, so no other job fits
// beside it either. A partition's OverSubscribe= policy is applied at
// submit. The planner keeps the jobs apart (sched.Sharing); at the start
// the job's allocation grows to its nodes' sizes, and it goes back to
// what was asked for if the job returns to the queue.

// setSharing is the admission step for the partition's policy: under
// EXCLUSIVE every job gets whole nodes, and -s is kept only where the
// partition allows it (YES), as Slurm does. An exclusive job's
// --mem-per-cpu counts every CPU of a node, so one no known node of the
// partition could hold that way is refused.
func setSharing(a *admission, spec *api.JobSpec) error {
	if a.part.Name == "" {
		return nil // the partition step said why
	}
	switch a.part.OverSubscribe {
	case "EXCLUSIVE":
		spec.Exclusive, spec.OverSubscribe = "node", false
	case "YES":
	default:
		spec.OverSubscribe = false
	}
	if spec.Exclusive != "node" || spec.MemPerCPU <= 0 || len(a.known) == 0 {
		return nil
	}
	var largest *node
	for _, n := range a.known {
		if spec.MemPerCPU*int64(n.rec.CPUs) <= n.rec.MemBytes {
			return nil
		}
		if largest == nil || n.rec.MemBytes > largest.rec.MemBytes {
			largest = n
		}
	}
	return invalid("--exclusive gives the job all of a node's CPUs, and --mem-per-cpu=%s for each is more than any node of partition %s has (largest: %s for %d CPUs): it could never run",
		config.FormatSize(spec.MemPerCPU), a.part.Name, config.FormatSize(largest.rec.MemBytes), largest.rec.CPUs)
}

// sharingOf is how the planner keeps other jobs off the job's nodes.
func sharingOf(spec *api.JobSpec) sched.Sharing {
	switch {
	case spec.Exclusive == "node" || spec.MemWholeNode:
		return sched.ShareNone
	case spec.Exclusive == "user":
		return sched.ShareUser
	}
	return sched.ShareNode
}

// sizedByNodes says whether the job's allocation depends on the sizes of
// the nodes it gets.
func sizedByNodes(spec *api.JobSpec) bool { return spec.Exclusive == "node" || spec.MemWholeNode }

// askedPerNode is what the job asks for on each node before it starts:
// for a job sized by its nodes, the spec's CPUs and memory (0 for
// --mem=0), whatever an earlier run was given.
func askedPerNode(job *api.Job) sched.Resources {
	per := perNode(job)
	if sizedByNodes(&job.Spec) {
		per.CPUs, per.MemBytes = job.Spec.CPUs, job.Spec.MemBytes
	}
	return per
}

// sizeOn is the CPUs and memory the job gets on each of these nodes: an
// exclusive job all of each node's CPUs, a --mem=0 job all of its memory.
// corral gives a job the same amount on every node, so on nodes of
// different sizes that is the smallest node's. Other jobs get what they
// asked for.
func (r *nodeRegistry) sizeOn(job *api.Job, names []string) (cpus int, mem int64) {
	spec := &job.Spec
	if !sizedByNodes(spec) {
		return job.CPUs, job.MemBytes
	}
	cpus, mem = spec.CPUs, spec.MemBytes
	minCPUs, minMem := 0, int64(0)
	for i, name := range names {
		n := r.get(name)
		if n == nil {
			return cpus, mem // the start is refused for the missing node
		}
		if i == 0 || n.rec.CPUs < minCPUs {
			minCPUs = n.rec.CPUs
		}
		if i == 0 || n.rec.MemBytes < minMem {
			minMem = n.rec.MemBytes
		}
	}
	if spec.Exclusive == "node" {
		cpus = max(cpus, minCPUs)
		if spec.MemPerCPU > 0 { // the planner chose nodes that hold it
			mem = min(spec.MemPerCPU*int64(cpus), minMem)
		}
	}
	if spec.MemWholeNode {
		mem = minMem
	}
	return cpus, mem
}

// holdingMemPerCPU narrows the nodes an exclusive job may use (allowed,
// nil for any of names) to those with its memory per CPU for every CPU.
func (r *nodeRegistry) holdingMemPerCPU(spec *api.JobSpec, allowed map[string]bool, names []string) map[string]bool {
	if spec.Exclusive != "node" || spec.MemPerCPU <= 0 {
		return allowed
	}
	out := make(map[string]bool, len(names))
	for _, name := range names {
		if n := r.get(name); n != nil && (allowed == nil || allowed[name]) && spec.MemPerCPU*int64(n.rec.CPUs) <= n.rec.MemBytes {
			out[name] = true
		}
	}
	return out
}

// wholeGPUs is an exclusive job's GPUs: every device of its nodes whole,
// besides the shares the planner packed (kept as they are on MIG
// devices, whose instances are cut by profile). Other jobs keep alloc.
func (r *nodeRegistry) wholeGPUs(job *api.Job, names []string, alloc []api.NodeGPUs, parts partitions) []api.NodeGPUs {
	if job.Spec.Exclusive != "node" {
		return alloc
	}
	var out []api.NodeGPUs
	for _, name := range names {
		n := r.get(name)
		if n == nil || len(n.gpus) == 0 {
			continue
		}
		per := n.perGPU(parts)
		var planned []gpu.Share
		if k := slices.IndexFunc(alloc, func(a api.NodeGPUs) bool { return a.Node == name }); k >= 0 {
			planned = gpu.SharesFromAPI(alloc[k].Shares)
		}
		var shares []gpu.Share
		for _, d := range n.gpus {
			if !d.MIGEnabled {
				shares = append(shares, gpu.Share{Device: d.Index, Amount: per})
				continue
			}
			for _, sh := range planned {
				if sh.Device == d.Index {
					shares = append(shares, sh)
				}
			}
		}
		if len(shares) > 0 {
			out = append(out, api.NodeGPUs{Node: name, Shares: gpu.SharesAPI(shares), FGPUPerGPUHundredths: int(per)})
		}
	}
	return out
}

// backToAsked undoes a run's node-sized allocation when the job returns
// to the queue (requeue, a failed launch), so it is planned as asked.
func backToAsked(old, next *api.Job) {
	if next.State == api.StatePending && old.State != api.StatePending && sizedByNodes(&next.Spec) {
		next.CPUs, next.MemBytes = next.Spec.CPUs, next.Spec.MemBytes
	}
}
