package shim

import (
	"sort"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
)

// defaultPath is used when the submitter's environment has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Environment is the job's environment: what --export passes of the
// submitter's (exported below), then corral's and Slurm's variables,
// which override it.
func Environment(j *Job) []string {
	l := &j.Launch
	nodes := l.NodeList
	if len(nodes) == 0 {
		nodes = []string{j.Node}
	}
	nodeList := strings.Join(nodes, ",")
	id := strconv.FormatUint(l.JobID, 10)
	cpus := strconv.Itoa(l.CPUs)
	memMiB := strconv.FormatInt(l.MemBytes>>20, 10)
	set := [][2]string{
		{"CORRAL_JOB_ID", id},
		{"CORRAL_JOB_NAME", l.Name},
		{"CORRAL_CPUS", cpus},
		{"CORRAL_MEM", memMiB},
		{"CORRAL_SUBMIT_DIR", l.WorkDir},
		{"CORRAL_NODELIST", nodeList},
		{"CORRAL_PARTITION", l.Partition},
		{"SLURM_JOB_ID", id},
		{"SLURM_JOBID", id},
		{"SLURM_JOB_NAME", l.Name},
		{"SLURM_CPUS_ON_NODE", cpus},
		{"SLURM_MEM_PER_NODE", memMiB},
		{"SLURM_SUBMIT_DIR", l.WorkDir},
		{"SLURM_JOB_PARTITION", l.Partition},
		{"SLURM_JOB_USER", l.User},
		{"SLURM_JOB_UID", strconv.FormatUint(uint64(l.UID), 10)},
		{"HOME", l.Home},
		{"USER", l.User},
		{"LOGNAME", l.User},
		{"TMPDIR", "/tmp"},
		{"SLURM_UMASK", umaskVar(l.Umask)},
	}
	switch l.OpenMode { // as sbatch passes --open-mode on to the job's sruns
	case "append":
		set = append(set, [2]string{"SLURM_OPEN_MODE", "a"})
	case "truncate":
		set = append(set, [2]string{"SLURM_OPEN_MODE", "t"})
	}
	set = append(set, layoutVars(j, nodes)...)
	set = append(set, pipelineVars(l)...)
	set = append(set, gpuVars(j)...) // gpu.go
	set = append(set, ctlVars(j)...) // ctlsock.go
	set = append(set, api.AppEnv(l.JobID, l.Apps)...)
	override := map[string]bool{}
	for _, kv := range set {
		override[kv[0]] = true
	}
	var env []string
	hasPath := false
	for _, kv := range withoutCtl(j, exported(l)) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || override[k] {
			continue
		}
		hasPath = hasPath || k == "PATH"
		env = append(env, kv)
	}
	if !hasPath && (l.Export == nil || l.Export.Mode != api.ExportNil) {
		env = append(env, "PATH="+defaultPath)
	}
	for _, kv := range set {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env
}

// exported is the part of the submitter's environment --export passes
// (jobspec.ExportedEnv). sbatch loads the user's login environment on
// the node for NONE and LIST; corral gives HOME, USER, LOGNAME and a
// default PATH instead (a login shell in the job loads the rest).
func exported(l *api.LaunchRequest) []string { return jobspec.ExportedEnv(l.Env, l.Export) }

// pipelineVars are the array and restart variables, in Slurm's and
// corral's names.
func pipelineVars(l *api.LaunchRequest) [][2]string {
	var out [][2]string
	both := func(name, value string) {
		out = append(out, [2]string{"SLURM_" + name, value}, [2]string{"CORRAL_" + name, value})
	}
	if a := l.Array; a != nil {
		both("ARRAY_JOB_ID", strconv.FormatUint(a.JobID, 10))
		both("ARRAY_TASK_ID", strconv.Itoa(a.TaskID))
		both("ARRAY_TASK_COUNT", strconv.Itoa(a.TaskCount))
		both("ARRAY_TASK_MIN", strconv.Itoa(a.TaskMin))
		both("ARRAY_TASK_MAX", strconv.Itoa(a.TaskMax))
		both("ARRAY_TASK_STEP", strconv.Itoa(a.TaskStep))
	}
	if l.Restarts > 0 {
		both("RESTART_COUNT", strconv.Itoa(l.Restarts))
	}
	return out
}

// umaskVar is SLURM_UMASK as Slurm writes it (0027); the job's processes
// run with that umask (the shim sets it, not the variable).
func umaskVar(s string) string {
	m, err := api.ParseUmask(s)
	if err != nil {
		m = api.DefaultUmask // run refuses such a launch before it gets here
	}
	return api.FormatUmask(m)
}

// layoutVars are the batch step's view of the allocation, as sbatch sets
// them: the node list in hostlist form, tasks and CPUs per node in
// Slurm's compressed form (in the node list's order), this node's index,
// and the batch step's own rank (0). SLURM_NTASKS is -n, or nodes x
// --ntasks-per-node, or (where sbatch leaves it unset) one per node, the
// count srun would use. SLURM_CPUS_PER_TASK is set only when -c was
// given, as in Slurm; a launch from a controller that sends no layout
// (no Role, no TasksPerNode) keeps corral's earlier value, the job's CPUs.
func layoutVars(j *Job, nodes []string) [][2]string {
	l := &j.Launch
	type slot struct {
		node        string
		tasks, cpus int
	}
	slots := make([]slot, len(nodes))
	for i, n := range nodes {
		slots[i] = slot{node: n, tasks: 1, cpus: l.CPUs}
		if len(l.CPUsPerNode) == len(nodes) {
			slots[i].cpus = l.CPUsPerNode[i]
		}
	}
	counts := l.TasksPerNode // the step layout's, else the job's rule
	if len(counts) != len(nodes) {
		counts = jobspec.TasksPerNode(l.Ntasks, l.NtasksPerNode, len(nodes))
	}
	for i := range slots {
		slots[i].tasks = counts[i]
	}
	sort.SliceStable(slots, func(a, b int) bool { return hostlist.Less(slots[a].node, slots[b].node) })
	tasks, cpus := make([]int, len(slots)), make([]int, len(slots))
	nodeID, total := 0, 0
	for i, s := range slots {
		tasks[i], cpus[i] = s.tasks, s.cpus
		total += s.tasks
		if s.node == j.Node {
			nodeID = i
		}
	}
	ntasks := l.Ntasks
	if ntasks <= 0 {
		ntasks = total
	}
	names := hostlist.Compress(nodes)
	nn := strconv.Itoa(len(nodes))
	out := [][2]string{
		{"SLURM_JOB_NODELIST", names},
		{"SLURM_NODELIST", names},
		{"SLURM_JOB_NUM_NODES", nn},
		{"SLURM_NNODES", nn},
		{"SLURM_NTASKS", strconv.Itoa(ntasks)},
		{"SLURM_NPROCS", strconv.Itoa(ntasks)},
		{"SLURM_TASKS_PER_NODE", hostlist.CompressCounts(tasks)},
		{"SLURM_JOB_CPUS_PER_NODE", hostlist.CompressCounts(cpus)},
		{"SLURMD_NODENAME", j.Node},
		{"SLURM_NODEID", strconv.Itoa(nodeID)},
		{"SLURM_PROCID", "0"},
		{"SLURM_LOCALID", "0"},
	}
	switch {
	case l.CPUsPerTask > 0:
		out = append(out, [2]string{"SLURM_CPUS_PER_TASK", strconv.Itoa(l.CPUsPerTask)})
	case l.Role == "" && len(l.TasksPerNode) == 0:
		out = append(out, [2]string{"SLURM_CPUS_PER_TASK", strconv.Itoa(l.CPUs)})
	}
	if l.NtasksPerNode > 0 {
		out = append(out, [2]string{"SLURM_NTASKS_PER_NODE", strconv.Itoa(l.NtasksPerNode)})
	}
	if l.SubmitHost != "" {
		out = append(out, [2]string{"SLURM_SUBMIT_HOST", l.SubmitHost})
	}
	if l.ClusterName != "" {
		out = append(out, [2]string{"SLURM_CLUSTER_NAME", l.ClusterName})
	}
	return out
}
