package cli

import "github.com/corral-hpc/corral/slurmopt"

// The rest of Slurm 22.05's srun options (srun(1)), so that a script or
// launcher that passes one is not stopped by "unrecognized option".

const (
	reqArg = slurmopt.RequiredArg
	optArg = slurmopt.OptionalArg
)

// srunAllocOptions shape the allocation srun makes outside one: they go
// to package jobspec in sbatch's spelling, which honours each or warns
// it away as sbatch does. Inside an allocation a step has no use for
// them, and srun says so.
var srunAllocOptions = []slurmopt.Option{
	{Short: 'A', Long: "account", Arg: reqArg},
	{Short: 'p', Long: "partition", Arg: reqArg},
	{Short: 't', Long: "time", Arg: reqArg},
	{Short: 'G', Long: "gpus", Arg: reqArg},
	{Long: "fgpu", Arg: reqArg},
	{Long: "image", Arg: reqArg},
	{Long: "container-image", Arg: reqArg},
	{Long: "mount", Arg: reqArg},
	{Long: "begin", Arg: reqArg},
	{Short: 'C', Long: "constraint", Arg: reqArg},
	{Short: 'd', Long: "dependency", Arg: reqArg},
	{Short: 'q', Long: "qos", Arg: reqArg},
	{Long: "reservation", Arg: reqArg},
	{Short: 'L', Long: "licenses", Arg: reqArg},
	{Long: "mail-type", Arg: reqArg},
	{Long: "mail-user", Arg: reqArg},
	{Long: "comment", Arg: reqArg},
	{Long: "nice", Arg: optArg},
	{Long: "deadline", Arg: reqArg},
	{Long: "mincpus", Arg: reqArg},
	{Long: "tmp", Arg: reqArg},
	{Long: "wckey", Arg: reqArg},
	{Long: "signal", Arg: reqArg},
	{Long: "time-min", Arg: reqArg},
	{Long: "uid", Arg: reqArg},
	{Long: "gid", Arg: reqArg},
	{Long: "switches", Arg: reqArg},
	{Short: 'S', Long: "core-spec", Arg: reqArg},
	{Long: "thread-spec", Arg: reqArg},
	{Long: "sockets-per-node", Arg: reqArg},
	{Long: "cores-per-socket", Arg: reqArg},
	{Long: "threads-per-core", Arg: reqArg},
	{Short: 'B', Long: "extra-node-info", Arg: reqArg},
	{Long: "gres-flags", Arg: reqArg},
	{Long: "gpus-per-socket", Arg: reqArg},
	{Long: "cpus-per-gpu", Arg: reqArg},
	{Long: "mem-per-gpu", Arg: reqArg},
	{Long: "prefer", Arg: reqArg},
	{Long: "delay-boot", Arg: reqArg},
	{Long: "mcs-label", Arg: reqArg},
	{Long: "cluster-constraint", Arg: reqArg},
	{Short: 'M', Long: "clusters", Arg: reqArg},
	{Long: "container", Arg: reqArg},
	{Long: "ntasks-per-core", Arg: reqArg},
	{Long: "ntasks-per-socket", Arg: reqArg},
	{Long: "ntasks-per-gpu", Arg: reqArg},
	{Long: "tres-per-task", Arg: reqArg},
	{Long: "priority", Arg: reqArg},
	{Long: "bb", Arg: reqArg},
	{Long: "bbf", Arg: reqArg},
	{Long: "acctg-freq", Arg: reqArg},
	{Long: "kill-on-invalid-dep", Arg: reqArg},
	{Short: 'k', Long: "no-kill", Arg: optArg},
	{Short: 'H', Long: "hold"},
	{Long: "reboot"},
	{Short: 's', Long: "oversubscribe"},
	{Short: 'O', Long: "overcommit"},
	{Long: "contiguous"},
	{Long: "use-min-nodes"},
	{Long: "spread-job"},
}

// srunIgnored are srun options corral accepts and ignores, each with
// the reason srun gives in its warning.
var srunIgnored = map[string]string{
	"accel-bind":        "corral does not bind tasks to accelerators",
	"bcast":             "corral does not copy the program to the nodes (they share the submit host's view)",
	"bcast-exclude":     "corral does not copy the program to the nodes",
	"compress":          "corral does not copy the program to the nodes",
	"cpu-freq":          "corral does not set CPU frequencies",
	"gpu-bind":          "corral does not bind tasks to GPUs",
	"gpu-freq":          "corral does not set GPU frequencies",
	"hint":              "corral does not bind tasks to cores or threads",
	"mem-bind":          "corral does not bind tasks to memory",
	"network":           "corral has no network options",
	"power":             "corral has no power options",
	"profile":           "corral gathers no profiles",
	"propagate":         "corral does not copy srun's resource limits",
	"resv-ports":        "corral reserves no ports for a step",
	"send-libs":         "corral does not copy the program to the nodes",
	"slurmd-debug":      "corral's node daemon logs at its own level",
	"threads":           "srun's own threads are not configurable",
	"disable-status":    "srun forwards the first SIGINT to the tasks either way",
	"quit-on-interrupt": "a second SIGINT within a second ends the step",
	"prolog":            "corral runs no srun prolog",
	"epilog":            "corral runs no srun epilog",
	"task-prolog":       "corral runs no task prolog",
	"task-epilog":       "corral runs no task epilog",
	"preserve-env":      "the tasks see the step's counts",
	"x11":               "corral does not forward X11",
}

// srunIgnoredOptions are srunIgnored's options with their forms.
var srunIgnoredOptions = []slurmopt.Option{
	{Long: "accel-bind", Arg: reqArg},
	{Long: "bcast", Arg: optArg},
	{Long: "bcast-exclude", Arg: reqArg},
	{Long: "compress", Arg: optArg},
	{Long: "cpu-freq", Arg: reqArg},
	{Long: "gpu-bind", Arg: reqArg},
	{Long: "gpu-freq", Arg: reqArg},
	{Long: "hint", Arg: reqArg},
	{Long: "mem-bind", Arg: reqArg},
	{Long: "network", Arg: reqArg},
	{Long: "power", Arg: reqArg},
	{Long: "profile", Arg: reqArg},
	{Long: "propagate", Arg: optArg},
	{Long: "resv-ports", Arg: optArg},
	{Long: "send-libs", Arg: optArg},
	{Long: "slurmd-debug", Arg: reqArg},
	{Short: 'T', Long: "threads", Arg: reqArg},
	{Short: 'X', Long: "disable-status"},
	{Long: "quit-on-interrupt"},
	{Long: "prolog", Arg: reqArg},
	{Long: "epilog", Arg: reqArg},
	{Long: "task-prolog", Arg: reqArg},
	{Long: "task-epilog", Arg: reqArg},
	{Short: 'E', Long: "preserve-env"},
	{Long: "x11", Arg: optArg},
}

// isAllocOption reports whether name is one of srunAllocOptions.
func isAllocOption(name string) bool {
	for _, o := range srunAllocOptions {
		if o.Long == name {
			return true
		}
	}
	return false
}
