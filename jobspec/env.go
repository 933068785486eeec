package jobspec

import (
	"fmt"
	"slices"
	"sort"
)

// LookupFunc returns an environment variable and whether it is set
// (os.LookupEnv).
type LookupFunc func(name string) (string, bool)

// envOptions are sbatch's input environment variables (sbatch(1), INPUT
// ENVIRONMENT VARIABLES) and the options they stand for. They override
// #SBATCH directives and the command line overrides them, as with sbatch;
// pipelines use them to set a partition or account for every submit.
// Only the variables sbatch reads are here, so a variable sbatch ignores
// does not change a job under corral either.
var envOptions = map[string]string{
	"SBATCH_ACCOUNT":          "account",
	"SBATCH_ACCTG_FREQ":       "acctg-freq",
	"SBATCH_ARRAY_INX":        "array",
	"SBATCH_BATCH":            "batch",
	"SBATCH_CLUSTERS":         "clusters",
	"SBATCH_CONSTRAINT":       "constraint",
	"SBATCH_CONTAINER":        "container",
	"SBATCH_CONTAINER_ID":     "container-id",
	"SBATCH_CORE_SPEC":        "core-spec",
	"SBATCH_CPUS_PER_GPU":     "cpus-per-gpu",
	"SBATCH_DELAY_BOOT":       "delay-boot",
	"SBATCH_DISTRIBUTION":     "distribution",
	"SBATCH_ERROR":            "error",
	"SBATCH_EXCLUSIVE":        "exclusive",
	"SBATCH_EXPORT":           "export",
	"SBATCH_GET_USER_ENV":     "get-user-env",
	"SBATCH_GPU_BIND":         "gpu-bind",
	"SBATCH_GPU_FREQ":         "gpu-freq",
	"SBATCH_GPUS":             "gpus",
	"SBATCH_GPUS_PER_NODE":    "gpus-per-node",
	"SBATCH_GPUS_PER_TASK":    "gpus-per-task",
	"SBATCH_GRES":             "gres",
	"SBATCH_GRES_FLAGS":       "gres-flags",
	"SBATCH_HINT":             "hint",
	"SBATCH_IGNORE_PBS":       "ignore-pbs",
	"SBATCH_INPUT":            "input",
	"SBATCH_JOB_NAME":         "job-name",
	"SBATCH_MEM_BIND":         "mem-bind",
	"SBATCH_MEM_PER_CPU":      "mem-per-cpu",
	"SBATCH_MEM_PER_GPU":      "mem-per-gpu",
	"SBATCH_MEM_PER_NODE":     "mem",
	"SBATCH_NETWORK":          "network",
	"SBATCH_NO_KILL":          "no-kill",
	"SBATCH_NO_REQUEUE":       "no-requeue",
	"SBATCH_OPEN_MODE":        "open-mode",
	"SBATCH_OUTPUT":           "output",
	"SBATCH_OVERCOMMIT":       "overcommit",
	"SBATCH_PARTITION":        "partition",
	"SBATCH_PROFILE":          "profile",
	"SBATCH_QOS":              "qos",
	"SBATCH_REQ_SWITCH":       "switches",
	"SBATCH_REQUEUE":          "requeue",
	"SBATCH_RESERVATION":      "reservation",
	"SBATCH_SIGNAL":           "signal",
	"SBATCH_SPREAD_JOB":       "spread-job",
	"SBATCH_THREAD_SPEC":      "thread-spec",
	"SBATCH_THREADS_PER_CORE": "threads-per-core",
	"SBATCH_TIMELIMIT":        "time",
	"SBATCH_TRES_PER_TASK":    "tres-per-task",
	"SBATCH_USE_MIN_NODES":    "use-min-nodes",
	"SBATCH_WAIT":             "wait",
	"SBATCH_WAIT_ALL_NODES":   "wait-all-nodes",
	"SBATCH_WCKEY":            "wckey",
}

// sallocVariables are the SALLOC_ variables salloc(1) reads for options
// it shares with sbatch (its INPUT ENVIRONMENT VARIABLES), as the suffix
// after SALLOC_; each stands for what SBATCH_ with the same suffix does.
// salloc's own options (--bell, --immediate, --kill-command) are not
// corral's, so their variables are not read.
var sallocVariables = []string{"ACCOUNT", "ACCTG_FREQ", "CLUSTERS", "CONSTRAINT", "CONTAINER",
	"CONTAINER_ID", "CORE_SPEC", "CPUS_PER_GPU", "DELAY_BOOT", "EXCLUSIVE", "GPUS", "GPUS_PER_NODE",
	"GPUS_PER_TASK", "GPU_BIND", "GPU_FREQ", "GRES", "GRES_FLAGS", "HINT", "MEM_BIND", "MEM_PER_CPU",
	"MEM_PER_GPU", "MEM_PER_NODE", "NETWORK", "NO_KILL", "OVERCOMMIT", "PARTITION", "PROFILE",
	"QOS", "REQ_SWITCH", "RESERVATION", "SIGNAL", "SPREAD_JOB", "THREADS_PER_CORE", "THREAD_SPEC",
	"TIMELIMIT", "USE_MIN_NODES", "WAIT_ALL_NODES", "WCKEY"}

// sallocOptions is envOptions for salloc.
var sallocOptions = func() map[string]string {
	m := make(map[string]string, len(sallocVariables))
	for _, v := range sallocVariables {
		if long, ok := envOptions["SBATCH_"+v]; ok {
			m["SALLOC_"+v] = long
		}
	}
	return m
}()

// envSetting is one input variable that is set, as the option it stands for.
type envSetting struct {
	name string // the variable
	setting
}

// envSettings reads the input variables that are set, in name order. A
// flag's variable sets the flag whatever its value (sbatch: "same as
// --requeue"); an option with an optional value takes the value when it
// is one the option knows (SBATCH_EXCLUSIVE=user), else it is the flag.
func envSettings(lookup LookupFunc, vars map[string]string) ([]envSetting, error) {
	if lookup == nil {
		return nil, nil
	}
	var out []envSetting
	for name, long := range vars {
		v, ok := lookup(name)
		if !ok {
			continue
		}
		opt := optionByName(long)
		switch {
		case opt == nil:
			return nil, fmt.Errorf("internal error: %s names no option --%s", name, long)
		case opt.arg == "" || (opt.optionalArg && (v == "" || len(opt.values) > 0 && !slices.Contains(opt.values, v))):
			v = "" // the flag itself, as sbatch reads SBATCH_REQUEUE=1
		case v == "":
			return nil, fmt.Errorf("environment variable %s is set but empty: it needs a value for --%s", name, long)
		}
		out = append(out, envSetting{name: name, setting: setting{opt: opt, value: v}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// applyEnv applies the input variables, naming the variable in an error.
func applyEnv(r *Request, sets []envSetting) error {
	for _, s := range sets {
		if err := applyAll(r, []setting{s.setting}); err != nil {
			return fmt.Errorf("environment variable %s=%s: %v", s.name, show(s.value), err)
		}
	}
	return nil
}

// EnvVariables lists the input environment variables submit reads, with
// the options they stand for, sorted by variable (for documentation).
func EnvVariables() [][2]string {
	out := make([][2]string, 0, len(envOptions))
	for name, long := range envOptions {
		out = append(out, [2]string{name, long})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// envVarOf is the input variable of the option long, "" if none.
func envVarOf(long string) string {
	for name, l := range envOptions {
		if l == long {
			return name
		}
	}
	return ""
}
