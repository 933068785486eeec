package shim

import (
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
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
		{"SLURM_UMASK", umaskVar(l.Umask)},
	}
	set = append(set, pipelineVars(l)...)
	set = append(set, gpuVars(j)...) // gpu.go
	override := map[string]bool{}
	for _, kv := range set {
		override[kv[0]] = true
	}
	var env []string
	hasPath := false
	for _, kv := range exported(l) {
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

// exported is the part of the submitter's environment --export passes:
//
//	ALL (or no --export)  all of it, then the NAME=value entries given
//	NONE                  only its SLURM_* and CORRAL_* variables
//	NIL                   the same, and no default PATH either
//	LIST                  the listed NAMEs (with the submitter's values),
//	                      NAME=value entries, and SLURM_* and CORRAL_*
//
// sbatch loads the user's login environment on the node for NONE and
// LIST; corral gives HOME, USER, LOGNAME and a default PATH instead (a
// login shell in the job loads the rest).
func exported(l *api.LaunchRequest) []string {
	e := l.Export
	if e == nil || e.Mode == api.ExportAll {
		if e == nil {
			return l.Env
		}
		return lastWins(append(append([]string(nil), l.Env...), literalVars(e.Vars)...))
	}
	var out []string
	for _, kv := range l.Env {
		if strings.HasPrefix(kv, "SLURM_") || strings.HasPrefix(kv, "CORRAL_") {
			out = append(out, kv)
		}
	}
	if e.Mode != api.ExportList {
		return out
	}
	for _, v := range e.Vars {
		if strings.Contains(v, "=") {
			out = append(out, v)
			continue
		}
		for _, kv := range l.Env {
			if strings.HasPrefix(kv, v+"=") {
				out = append(out, kv)
			}
		}
	}
	return lastWins(out)
}

// lastWins drops all but the last entry of each variable: a program sees
// one value, the one given last.
func lastWins(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := env[:0:0]
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); last[k] == i {
			out = append(out, kv)
		}
	}
	return out
}

// literalVars are the NAME=value entries of an --export list.
func literalVars(vars []string) []string {
	var out []string
	for _, v := range vars {
		if strings.Contains(v, "=") {
			out = append(out, v)
		}
	}
	return out
}

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
