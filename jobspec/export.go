package jobspec

import (
	"strings"

	"github.com/corral-hpc/corral/api"
)

// ExportedEnv is the part of env (the submitter's, or srun's) that
// --export e passes to a job's or a step's processes:
//
//	ALL (or no --export)  all of it, then the NAME=value entries given
//	NONE, NIL             only its SLURM_* and CORRAL_* variables
//	LIST                  the listed NAMEs (with env's values),
//	                      NAME=value entries, and SLURM_* and CORRAL_*
//
// A variable given more than once keeps its last value. (What else a
// node adds, the login variables and a default PATH, is its business.)
func ExportedEnv(env []string, e *api.EnvExport) []string {
	if e == nil || e.Mode == api.ExportAll {
		if e == nil {
			return env
		}
		return lastWins(append(append([]string(nil), env...), literalVars(e.Vars)...))
	}
	var out []string
	for _, kv := range env {
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
		for _, kv := range env {
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

func literalVars(vars []string) []string {
	var out []string
	for _, v := range vars {
		if strings.Contains(v, "=") {
			out = append(out, v)
		}
	}
	return out
}

// ParseGres reads a --gres value as sbatch takes it (none: no GRES).
func ParseGres(s string) ([]api.GresRequest, error) { return parseGres(s) }

// GPUCount sums the GPUs in a GRES list.
func GPUCount(list []api.GresRequest) int64 { return gpuCount(list) }
