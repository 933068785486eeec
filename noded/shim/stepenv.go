package shim

import (
	"sort"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// TaskEnv is the environment of the task with global rank rank, the
// local-th of this node: srun's own (which carries the job's SLURM_JOB_*
// variables), with the step's and the task's variables over it, as
// slurmstepd sets them, the job's GPU variables for this node (srun's
// come from another node, or none), and the variables frameworks read
// (MASTER_ADDR is the step's first node, MASTER_PORT the port srun
// picked). Node lists are in hostlist form and per-node counts in
// Slurm's compressed form, in the node list's order; SLURM_NODEID is the
// node's index in that order too (as in Slurm, where a step's nodes are
// always in it), so that a program pairing the expanded node list with
// the counts finds itself where SLURM_NODEID says.
func TaskEnv(job *Job, s *StepJob, rank, local int) []string {
	c := &s.Launch.Credential
	type slot struct {
		node  string
		tasks int
	}
	slots := make([]slot, len(c.Layout))
	names := make([]string, len(c.Layout))
	for i, n := range c.Layout {
		slots[i] = slot{n.Node, len(n.Ranks)}
		names[i] = n.Node
	}
	sort.SliceStable(slots, func(a, b int) bool { return hostlist.Less(slots[a].node, slots[b].node) })
	perNode := make([]int, len(slots))
	nodeID := s.NodeID
	for i, sl := range slots {
		perNode[i] = sl.tasks
		if sl.node == s.Node {
			nodeID = i
		}
	}
	gtids := make([]string, len(s.Ranks))
	for i, r := range s.Ranks {
		gtids[i] = strconv.Itoa(r)
	}
	tasksPerNode := hostlist.CompressCounts(perNode)
	itoa := strconv.Itoa
	set := [][2]string{
		{"SLURM_JOB_ID", strconv.FormatUint(c.JobID, 10)},
		{"SLURM_JOBID", strconv.FormatUint(c.JobID, 10)},
		{"SLURM_STEP_ID", itoa(c.StepID)},
		{"SLURM_STEPID", itoa(c.StepID)},
		{"SLURM_PROCID", itoa(rank)},
		{"SLURM_LOCALID", itoa(local)},
		{"SLURM_NODEID", itoa(nodeID)},
		{"SLURM_NTASKS", itoa(c.Tasks)},
		{"SLURM_NPROCS", itoa(c.Tasks)},
		{"SLURM_STEP_NODELIST", hostlist.Compress(names)},
		{"SLURM_STEP_NUM_NODES", itoa(len(c.Layout))},
		{"SLURM_STEP_NUM_TASKS", itoa(c.Tasks)},
		{"SLURM_STEP_TASKS_PER_NODE", tasksPerNode},
		{"SLURM_TASKS_PER_NODE", tasksPerNode},
		{"SLURM_GTIDS", strings.Join(gtids, ",")},
		{"SLURMD_NODENAME", s.Node},
		{"SLURM_LAUNCH_NODE_IPADDR", s.LaunchNodeIP},
		{"WORLD_SIZE", itoa(c.Tasks)},
		{"RANK", itoa(rank)},
		{"LOCAL_RANK", itoa(local)},
		{"LOCAL_WORLD_SIZE", itoa(len(s.Ranks))},
	}
	if len(c.Layout) > 0 {
		set = append(set, [2]string{"MASTER_ADDR", c.Layout[0].Node})
	}
	if s.Launch.MasterPort > 0 {
		set = append(set, [2]string{"MASTER_PORT", itoa(s.Launch.MasterPort)})
	}
	if n := nodeOf(c, s.Node); n != nil && n.CPUs > 0 && len(n.Ranks) > 0 {
		set = append(set, [2]string{"SLURM_CPUS_PER_TASK", itoa(max(n.CPUs/len(n.Ranks), 1))})
	}
	set = append(set, gpuVars(job)...) // gpu.go
	set = append(set, ctlVars(job)...) // ctlsock.go: srun's may name a socket outside the job
	return overlay(withoutCtl(job, s.Launch.Env), set)
}

func nodeOf(c *api.StepCredential, node string) *api.StepNode {
	for i := range c.Layout {
		if c.Layout[i].Node == node {
			return &c.Layout[i]
		}
	}
	return nil
}

// overlay is env without the variables set names, then set's, in order.
func overlay(env []string, set [][2]string) []string {
	names := make(map[string]bool, len(set))
	for _, kv := range set {
		names[kv[0]] = true
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" && !names[k] {
			out = append(out, kv)
		}
	}
	for _, kv := range set {
		out = append(out, kv[0]+"="+kv[1])
	}
	return out
}
