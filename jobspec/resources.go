package jobspec

import (
	"fmt"
	"strings"
)

// maxCount bounds counts of nodes, tasks and CPUs: far above any cluster,
// low enough that products of them cannot overflow.
const maxCount = 1 << 20

// checkConflicts refuses options that sbatch refuses together. Like sbatch
// it counts an option given anywhere, in the script or on the command
// line: a command line cannot silently turn a script's --mem into
// --mem-per-cpu.
func checkConflicts(r *Request) error {
	var mem []string
	for _, name := range []string{"mem", "mem-per-cpu", "mem-per-gpu"} {
		if r.st.given[name] {
			mem = append(mem, "--"+name)
		}
	}
	if len(mem) > 1 {
		return fmt.Errorf("--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (got %s)", strings.Join(mem, " and "))
	}
	if r.st.given["cpus-per-task"] && r.st.given["cpus-per-gpu"] {
		return fmt.Errorf("--cpus-per-task and --cpus-per-gpu are mutually exclusive")
	}
	if len(r.Spec.GPUsPerNode) > 0 && gpuCount(r.Spec.Gres) > 0 {
		return fmt.Errorf("--gpus-per-node and --gres=gpu are mutually exclusive")
	}
	return checkFGPU(&r.Spec)
}

// resolveResources turns the task, CPU, GPU and memory options into the
// per-node totals of the spec (Nodes, CPUs, MemBytes), by the rule in the
// package documentation.
func resolveResources(r *Request) error {
	s := &r.Spec
	nodes := max(s.Nodes, 1)
	switch {
	case s.Nodes == 0 && s.Ntasks > 0 && s.NtasksPerNode > 0:
		nodes = ceilDiv(s.Ntasks, s.NtasksPerNode)
		if nodes > 1 {
			s.Nodes = nodes
		}
	case s.Ntasks > 0 && s.Ntasks < nodes:
		r.st.current = "nodes"
		r.note(fmt.Sprintf("--nodes=%d is more than --ntasks=%d; the job gets %d node(s)", nodes, s.Ntasks, s.Ntasks))
		nodes, s.Nodes = s.Ntasks, s.Ntasks
	}

	tasksPerNode := 1
	switch {
	case s.Ntasks > 0:
		tasksPerNode = ceilDiv(s.Ntasks, nodes)
		if s.NtasksPerNode > 0 && tasksPerNode > s.NtasksPerNode {
			return fmt.Errorf("--ntasks=%d does not fit on %d node(s) with --ntasks-per-node=%d", s.Ntasks, nodes, s.NtasksPerNode)
		}
	case s.NtasksPerNode > 0:
		tasksPerNode = s.NtasksPerNode
	}

	// GPUs on each node, from whichever option names them.
	var gpus int64
	switch {
	case len(s.GPUsPerNode) > 0:
		gpus = gpuCount(s.GPUsPerNode)
	case gpuCount(s.Gres) > 0:
		gpus = gpuCount(s.Gres)
	case len(s.GPUsPerTask) > 0:
		gpus = gpuCount(s.GPUsPerTask) * int64(tasksPerNode)
	case len(s.GPUs) > 0:
		gpus = (gpuCount(s.GPUs) + int64(nodes) - 1) / int64(nodes)
	}

	cpus := int64(max(s.CPUsPerTask, 1)) * int64(tasksPerNode)
	if s.CPUsPerGPU > 0 {
		if gpus == 0 {
			return fmt.Errorf("--cpus-per-gpu needs GPUs: add --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu")
		}
		cpus = int64(s.CPUsPerGPU) * gpus
	}
	cpus = max(cpus, int64(r.st.minCPUs))
	if cpus > maxCount {
		return fmt.Errorf("the job asks for %d CPUs per node, more than the limit of %d", cpus, maxCount)
	}
	s.CPUs = int(cpus)

	switch {
	case s.MemPerCPU > 0:
		if s.MemPerCPU > (1<<62)/cpus {
			return fmt.Errorf("--mem-per-cpu x %d CPUs is too large", cpus)
		}
		s.MemBytes = s.MemPerCPU * cpus
	case s.MemPerGPU > 0:
		if gpus == 0 {
			return fmt.Errorf("--mem-per-gpu needs GPUs: add --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu")
		}
		if s.MemPerGPU > (1<<62)/gpus {
			return fmt.Errorf("--mem-per-gpu x %d GPUs is too large", gpus)
		}
		s.MemBytes = s.MemPerGPU * gpus
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TasksPerNode is how a job's tasks sit on its nodes, as Slurm's
// SLURM_TASKS_PER_NODE says (for the batch script and for salloc's
// command alike): --ntasks-per-node on each node; else -n in blocks, the
// first nodes taking one more; else one a node.
func TasksPerNode(ntasks, ntasksPerNode, nodes int) []int {
	out := make([]int, max(nodes, 0))
	for i := range out {
		switch {
		case ntasksPerNode > 0:
			out[i] = ntasksPerNode
		case ntasks > 0:
			out[i] = ntasks / nodes
			if i < ntasks%nodes {
				out[i]++
			}
		default:
			out[i] = 1
		}
	}
	return out
}
