package shim

import (
	"strconv"
	"strings"
)

// defaultPath is used when the submitter's environment has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Environment is the job's environment: the submitter's, then corral's and
// Slurm's variables, which override it.
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
		{"SLURM_CPUS_PER_TASK", cpus},
		{"SLURM_CPUS_ON_NODE", cpus},
		{"SLURM_MEM_PER_NODE", memMiB},
		{"SLURM_SUBMIT_DIR", l.WorkDir},
		{"SLURM_JOB_NODELIST", nodeList},
		{"SLURM_JOB_PARTITION", l.Partition},
		{"SLURM_JOB_USER", l.User},
		{"SLURM_JOB_UID", strconv.FormatUint(uint64(l.UID), 10)},
		{"SLURM_NNODES", strconv.Itoa(len(nodes))},
		{"SLURM_NTASKS", "1"},
		{"HOME", l.Home},
		{"USER", l.User},
		{"LOGNAME", l.User},
		{"TMPDIR", "/tmp"},
	}
	override := map[string]bool{}
	for _, kv := range set {
		override[kv[0]] = true
	}
	var env []string
	hasPath := false
	for _, kv := range l.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || override[k] {
			continue
		}
		hasPath = hasPath || k == "PATH"
		env = append(env, kv)
	}
	if !hasPath {
		env = append(env, "PATH="+defaultPath)
	}
	for _, kv := range set {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env
}
