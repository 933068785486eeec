package jobspec

import (
	"fmt"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// Reasons shared by several ignored options.
const (
	noLayout   = "corral allocates CPUs per node, without a socket, core or thread layout"
	noBinding  = "corral does no task binding; the job's own launcher places its tasks"
	oneCluster = "corral runs a single cluster"
	noSegments = "corral has no topology segments"
	noBB       = "this cluster has no burst buffers"
)

// options is the table: one row per option, sorted by long name. It holds
// every option of sbatch (Slurm 26.11, hidden aliases included) and
// corral's own (corral: true).
var options = []option{
	{long: "account", short: 'A', arg: "NAME", help: "account to charge the job to",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Account, "account", v) }},
	{long: "acctg-freq", arg: "TYPE=SECONDS", ignore: "corral samples accounting at its own fixed interval"},
	{long: "app", arg: "NAME=PORT", corral: true, help: "publish a web app the job serves on PORT, proxied by the dashboard at /apps/JOBID/NAME/ (repeatable)",
		apply: applyApp},
	{long: "array", short: 'a', arg: "INDEXES", help: "job array: 0-15, 1,3,5 or 0-15:4, optionally %N running at once",
		apply: applyArray},
	{long: "autocomplete", arg: "WORD", hidden: true, commandLineOnly: true, ignore: "use corral completion bash (or zsh) for shell completion"},
	{long: "batch", arg: "FEATURES", ignore: "the batch script always runs on the job's first node"},
	{long: "bb", arg: "SPEC", ignore: noBB},
	{long: "bbf", arg: "FILE", ignore: noBB},
	{long: "begin", short: 'b', arg: "TIME", help: "start no earlier than TIME: 16:00, now+1hour, tomorrow, 2026-01-20T12:34",
		apply: func(r *Request, v string) error {
			t, err := ParseBegin(v, r.st.now)
			if err != nil {
				return err
			}
			r.Spec.Begin = &t
			return nil
		}},
	{long: "chdir", short: 'D', arg: "DIR", help: "run the job in DIR (default: the current directory)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.WorkDir, "chdir", v) }},
	{long: "cluster", arg: "NAME", hidden: true, ignore: oneCluster},
	{long: "cluster-constraint", arg: "LIST", ignore: oneCluster},
	{long: "clusters", short: 'M', arg: "NAMES", ignore: oneCluster},
	{long: "comment", arg: "TEXT", help: "attach a comment to the job",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Comment, "comment", v) }},
	{long: "consolidate-segments", ignore: noSegments},
	{long: "constraint", short: 'C', arg: "FEATURES", help: "node features the job needs: a&b, a|b, (a|b)&c, [a|b] on one node",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Constraint, "constraint", v) }},
	{long: "container", arg: "BUNDLE", ignore: "corral runs OCI images, not bundle paths: use --container-image"},
	{long: "container-id", arg: "ID", ignore: "corral names its containers itself"},
	{long: "container-image", arg: "IMAGE", corral: true, help: "run the script in the container image IMAGE (name:tag)",
		apply: func(r *Request, v string) error {
			if !validImage(v) {
				return badValue("container-image", v, "use an image reference like ubuntu:24.04 or registry.example.com/team/app:1.2")
			}
			r.Spec.ContainerImage = v
			return nil
		}},
	{long: "context", arg: "CONTEXT", hidden: true, ignore: "corral sets no SELinux context"},
	{long: "contiguous", ignore: "corral does not order nodes by topology"},
	{long: "core-spec", short: 'S', arg: "N", ignore: "corral reserves no specialized cores"},
	{long: "cores-per-socket", arg: "N", ignore: noLayout},
	{long: "cpu-freq", arg: "FREQ", ignore: "corral does not set CPU frequencies"},
	{long: "cpus-per-gpu", arg: "N", help: "CPUs per allocated GPU (instead of --cpus-per-task)",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.CPUsPerGPU, "cpus-per-gpu", v) }},
	{long: "cpus-per-task", short: 'c', arg: "N", help: "CPUs per task (default 1)",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.CPUsPerTask, "cpus-per-task", v) }},
	{long: "deadline", arg: "TIME", ignore: "corral does not cancel jobs at a deadline"},
	{long: "delay-boot", arg: "MINUTES", ignore: "corral does not boot nodes"},
	{long: "dependency", short: 'd', arg: "LIST", help: "wait for other jobs: afterok:ID[:ID], afterany, afternotok, after[+MIN], singleton; , = all, ? = any",
		values: []string{"after:", "afterany:", "afterok:", "afternotok:", "aftercorr:", "singleton"},
		apply:  applyDependency},
	{long: "distribution", short: 'm', arg: "LAYOUT", ignore: noBinding},
	{long: "error", short: 'e', arg: "PATTERN", help: "stderr file (default: the --output file); %j %x %u %A %a %N %n %%",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Error, "error", v) }},
	{long: "exclude", short: 'x', arg: "NODES", help: "never run on these nodes (a host list, or a file of names when it has a /)",
		apply: func(r *Request, v string) error { return setNodeNames(&r.Spec.Exclude, "exclude", v) }},
	{long: "exclusive", arg: "user", optionalArg: true, help: "whole nodes with all their CPUs and GPUs, shared with no other job; =user shares with your own jobs",
		values: []string{"user"}, apply: applyExclusive},
	{long: "export", arg: "VARS", help: "environment the job gets: ALL (default), NONE, NIL or NAME,NAME=value,...",
		values: []string{"ALL", "NONE", "NIL"},
		apply: func(r *Request, v string) error {
			e, err := ParseExport(v)
			r.Spec.Export = e
			return err
		}},
	{long: "export-file", arg: "FILE", ignore: "corral reads no environment files: use --export"},
	{long: "external", hidden: true, ignore: "corral has no external jobs"},
	{long: "extra", arg: "TEXT", ignore: "corral has no extra node constraints"},
	{long: "extra-node-info", short: 'B', arg: "S[:C[:T]]", ignore: noLayout},
	{long: "fgpu", arg: "X", corral: true, help: "fractional GPU per node in fGPU (0.5, 1, 2.25; not with --gpus or --gres=gpu)",
		apply: applyFGPU},
	{long: "get-user-env", arg: "TIMEOUT", optionalArg: true, ignore: "corral passes the submitter's environment as --export says"},
	{long: "gid", arg: "GROUP", ignore: "corral runs jobs with the submitting user's groups"},
	{long: "gpu-bind", arg: "TYPE", ignore: noBinding},
	{long: "gpu-freq", arg: "FREQ", ignore: "corral does not set GPU frequencies"},
	{long: "gpus", short: 'G', arg: "[TYPE:]N", help: "GPUs for the whole job",
		apply: func(r *Request, v string) error { return setGPUs(&r.Spec.GPUs, "gpus", v) }},
	{long: "gpus-per-node", arg: "[TYPE:]N", help: "GPUs on each node (not with --gres=gpu)",
		apply: func(r *Request, v string) error { return setGPUs(&r.Spec.GPUsPerNode, "gpus-per-node", v) }},
	{long: "gpus-per-socket", arg: "[TYPE:]N", ignore: "corral allocates GPUs per node, not per socket"},
	{long: "gpus-per-task", arg: "[TYPE:]N", help: "GPUs for each task",
		apply: func(r *Request, v string) error { return setGPUs(&r.Spec.GPUsPerTask, "gpus-per-task", v) }},
	{long: "gres", arg: "LIST", help: "generic resources per node: gpu:2, gpu:a100:2, none",
		apply: func(r *Request, v string) error {
			g, err := parseGres(v)
			if err != nil {
				return fmt.Errorf("invalid --gres %s: %v", quoteValue(v), err)
			}
			r.Spec.Gres = g
			return nil
		}},
	{long: "gres-flags", arg: "FLAGS", ignore: noBinding},
	{long: "help", short: 'h', commandLineOnly: true, help: "show this help",
		apply: func(r *Request, _ string) error { r.Help = true; return nil }},
	{long: "hint", arg: "HINT", ignore: noBinding},
	{long: "hold", short: 'H', help: "submit the job held; it runs once released",
		apply: func(r *Request, _ string) error { r.Spec.Hold = true; return nil }},
	{long: "ignore-pbs", ignore: "corral never reads #PBS or #BSUB lines"},
	{long: "image", arg: "IMAGE", corral: true, help: "same as --container-image",
		apply: func(r *Request, v string) error {
			if !validImage(v) {
				return badValue("image", v, "use an image reference like ubuntu:24.04 or registry.example.com/team/app:1.2")
			}
			r.Spec.ContainerImage = v
			return nil
		}},
	{long: "input", short: 'i', arg: "PATTERN", help: "stdin file (default /dev/null); same patterns as --output",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Input, "input", v) }},
	{long: "job-name", short: 'J', arg: "NAME", help: "name of the job: printable text, no newline (default: the script's file name)",
		apply: func(r *Request, v string) error {
			if err := setText(&r.Spec.Name, "job-name", v); err != nil {
				return err
			}
			return CheckJobName(v)
		}},
	{long: "kill-on-invalid-dep", arg: "yes|no", help: "cancel the job if its dependency can never be met",
		values: []string{"yes", "no"},
		apply: func(r *Request, v string) error {
			switch strings.ToLower(v) {
			case "yes":
				r.Spec.KillOnInvalidDep = boolPtr(true)
			case "no":
				r.Spec.KillOnInvalidDep = boolPtr(false)
			default:
				return badValue("kill-on-invalid-dep", v, "use yes or no")
			}
			return nil
		}},
	{long: "licenses", short: 'L', arg: "LIST", ignore: "this cluster tracks no licenses"},
	{long: "mail-type", arg: "TYPE", ignore: "this cluster sends no mail", check: checkMailType},
	{long: "mail-user", arg: "ADDRESS", ignore: "this cluster sends no mail"},
	{long: "mcs-label", arg: "LABEL", ignore: "corral has no MCS labels"},
	{long: "mem", arg: "SIZE", help: "memory per node: a number with K, M, G or T (bare = MiB); 0 is all of it", apply: applyMem},
	{long: "mem-bind", arg: "TYPE", ignore: noBinding},
	{long: "mem-per-cpu", arg: "SIZE", help: "memory per CPU (not with --mem or --mem-per-gpu); 0 is all of each node's", apply: applyMemPerCPU},
	{long: "mem-per-gpu", arg: "SIZE", help: "memory per GPU (not with --mem or --mem-per-cpu)",
		apply: func(r *Request, v string) error { return setSize(&r.Spec.MemPerGPU, "mem-per-gpu", v) }},
	{long: "mem-update", arg: "MARGIN@DELAY", ignore: "corral does not change memory limits of running jobs"},
	{long: "mincpus", arg: "N", help: "at least N CPUs per node",
		apply: func(r *Request, v string) error { return setCount(&r.st.minCPUs, "mincpus", v) }},
	{long: "mount", arg: "SRC:DST[:ro]", corral: true, help: "bind host path SRC at DST in the container (repeatable)",
		apply: func(r *Request, v string) error {
			m, err := parseMount(v)
			if err != nil {
				return err
			}
			for _, o := range r.Spec.Mounts {
				if o.Target == m.Target {
					return fmt.Errorf("invalid --mount %s: %s is already a mount target", quoteValue(v), m.Target)
				}
			}
			r.Spec.Mounts = append(r.Spec.Mounts, m)
			return nil
		}},
	{long: "network", arg: "TYPE", ignore: "corral has no network options"},
	{long: "nice", arg: "ADJUSTMENT", optionalArg: true, help: "lower the job's priority (default 100; negative: root only)",
		apply: func(r *Request, v string) error {
			n, err := parseNice(v)
			r.Spec.Nice = n
			return err
		}},
	{long: "no-kill", short: 'k', arg: "off", optionalArg: true, ignore: "corral ends the job when one of its nodes fails"},
	{long: "no-requeue", help: "never requeue the job",
		apply: func(r *Request, _ string) error { r.Spec.Requeue = boolPtr(false); return nil }},
	{long: "nodefile", short: 'F', arg: "FILE", help: "as --nodelist, the names read from FILE", apply: applyNodeFile},
	{long: "nodelist", short: 'w', arg: "NODES", help: "run on exactly these nodes (a host list, or a file of names when it has a /)",
		apply: func(r *Request, v string) error { return setNodeNames(&r.Spec.NodeList, "nodelist", v) }},
	{long: "nodes", short: 'N', arg: "N", help: "number of nodes (default 1); of MIN-MAX, corral takes MIN", apply: applyNodes},
	{long: "ntasks", short: 'n', arg: "N", help: "number of tasks (default one per node)",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.Ntasks, "ntasks", v) }},
	{long: "ntasks-per-core", arg: "N", ignore: noLayout},
	{long: "ntasks-per-gpu", arg: "N", ignore: "use --ntasks with --gpus-per-task"},
	{long: "ntasks-per-node", arg: "N", help: "tasks on each node",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.NtasksPerNode, "ntasks-per-node", v) }},
	{long: "ntasks-per-socket", arg: "N", ignore: noLayout},
	{long: "ntasks-per-tres", arg: "N", hidden: true, ignore: "use --ntasks with --gpus-per-task"},
	{long: "oom-kill-step", arg: "0|1", optionalArg: true, ignore: "a step shares its job's memory cgroup, so an OOM kill is not per step"},
	{long: "open-mode", arg: "append|truncate", help: "open the output files for appending or truncate them",
		values: []string{"append", "truncate"},
		apply: func(r *Request, v string) error {
			switch {
			case v != "" && hasPrefixFold("append", v):
				r.Spec.OpenMode = "append"
			case v != "" && hasPrefixFold("truncate", v):
				r.Spec.OpenMode = "truncate"
			default:
				return badValue("open-mode", v, "use append or truncate")
			}
			return nil
		}},
	{long: "output", short: 'o', arg: "PATTERN", help: "stdout file (default " + DefaultOutput + "); %j %x %u %A %a %N %n %%",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Output, "output", v) }},
	{long: "overcommit", short: 'O', ignore: "corral never gives a job fewer CPUs than it asks for"},
	{long: "oversubscribe", short: 's', help: "share nodes with other jobs where the partition allows it (never CPUs)",
		apply: func(r *Request, _ string) error { return applyExclusive(r, "oversubscribe") }},
	{long: "parsable", help: "print only the job ID",
		apply: func(r *Request, _ string) error { r.Parsable = true; return nil }},
	{long: "partition", short: 'p', arg: "NAME", help: "partition to run in (default: the cluster's default)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Partition, "partition", v) }},
	{long: "prefer", arg: "FEATURES", ignore: "corral has no soft feature preferences"},
	{long: "priority", arg: "VALUE", ignore: "priorities follow the cluster's policy (use --nice to lower yours)"},
	{long: "profile", arg: "TYPES", ignore: "corral gathers no profiles"},
	{long: "propagate", arg: "RLIMITS", optionalArg: true, ignore: "corral does not copy the submitter's resource limits"},
	{long: "qos", short: 'q', arg: "NAME", help: "quality of service (corral has one: normal)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.QOS, "qos", v) }},
	{long: "quiet", short: 'Q', help: "print nothing but errors (no job ID, no warnings)",
		apply: func(r *Request, _ string) error { r.Quiet = true; return nil }},
	{long: "reboot", ignore: "corral does not reboot nodes"},
	{long: "requeue", arg: "expedite", optionalArg: true, help: "allow the job to be requeued",
		values: []string{"expedite"},
		apply: func(r *Request, v string) error {
			switch {
			case v == "":
			case strings.EqualFold(v, "expedite"):
				r.note("--requeue=expedite: expedite is ignored; the job is requeued with its usual priority")
			default:
				return badValue("requeue", v, "use --requeue or --requeue=expedite")
			}
			r.Spec.Requeue = boolPtr(true)
			return nil
		}},
	{long: "reservation", arg: "NAMES", ignore: "corral has no reservations"},
	{long: "resources", arg: "LIST", ignore: "corral has no hierarchical resources"},
	{long: "resv-ports", arg: "COUNT", optionalArg: true, ignore: "corral reserves no ports"},
	{long: "runtime", arg: "NAME", ignore: "corral has one container runtime"},
	{long: "segment", arg: "SIZE", ignore: noSegments},
	{long: "shm", arg: "SIZE", corral: true, help: "size of the job's /dev/shm (default 64M, at most --mem)",
		apply: func(r *Request, v string) error { return setSize(&r.Spec.ShmBytes, "shm", v) }},
	{long: "signal", arg: "[B:]SIG[@SECONDS]", help: "send SIG this long (default 60 s) before the time limit",
		apply: func(r *Request, v string) error {
			sig, resv, err := ParseSignal(v)
			if err != nil {
				return err
			}
			if resv {
				r.note("--signal " + v + ": R: is ignored; corral has no reservations")
			}
			r.Spec.Signal = &sig
			return nil
		}},
	{long: "socket", arg: "PATH", corral: true, commandLineOnly: true, help: "controller socket (default $CORRAL_SOCKET or /run/corral/ctld.sock)",
		apply: func(r *Request, v string) error { return setText(&r.Socket, "socket", v) }},
	{long: "sockets-per-node", arg: "N", ignore: noLayout},
	{long: "spread-job", ignore: "corral places jobs by its own policy"},
	{long: "spread-segments", ignore: noSegments},
	{long: "stepmgr", ignore: "corral has no step manager"},
	{long: "switches", arg: "COUNT[@TIME]", ignore: "corral does not place jobs by network switch"},
	{long: "tasks-per-node", arg: "N", hidden: true, help: "same as --ntasks-per-node",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.NtasksPerNode, "tasks-per-node", v) }},
	{long: "test-only", help: "check the job and estimate its start; submit nothing",
		apply: func(r *Request, _ string) error { r.TestOnly = true; return nil }},
	{long: "thread-spec", arg: "N", ignore: "corral reserves no specialized threads"},
	{long: "threads-per-core", arg: "N", ignore: noLayout},
	{long: "time", short: 't', arg: "TIME", help: "time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED",
		apply: func(r *Request, v string) error {
			n, ok := parseTimeLimit(v)
			if !ok {
				return badValue("time", v, timeHint)
			}
			// Slurm reads a zero limit as no limit, not as the default.
			r.Spec.TimeLimit, r.Spec.TimeUnlimited = n, n == 0
			return nil
		}},
	{long: "time-min", arg: "TIME", ignore: "corral does not shorten time limits to start jobs earlier"},
	{long: "tmp", arg: "SIZE", ignore: "corral does not track nodes' local disk"},
	{long: "tres-bind", arg: "SPEC", ignore: noBinding},
	{long: "tres-per-task", arg: "LIST", ignore: "use --cpus-per-task or --gpus-per-task"},
	{long: "uid", arg: "USER", help: "submit for another user (root only)",
		apply: func(r *Request, v string) error { return setText(&r.OnBehalfOf, "uid", v) }},
	{long: "usage", commandLineOnly: true, help: "same as --help",
		apply: func(r *Request, _ string) error { r.Help = true; return nil }},
	{long: "use-min-nodes", ignore: "corral always allocates the minimum of a --nodes range"},
	{long: "verbose", short: 'v', ignore: "corral submit has no verbose output"},
	{long: "version", short: 'V', commandLineOnly: true, help: "print the version and exit",
		apply: func(r *Request, _ string) error { r.Version = true; return nil }},
	{long: "wait", short: 'W', help: "wait for the job to end and exit with its status",
		apply: func(r *Request, _ string) error { r.Wait = true; return nil }},
	{long: "wait-all-nodes", arg: "0|1", ignore: "corral does not boot nodes, so they are always ready"},
	{long: "wckey", arg: "KEY", ignore: "corral has no workload keys"},
	{long: "wrap", arg: "COMMAND", commandLineOnly: true, help: "run COMMAND with /bin/sh instead of a script",
		apply: func(r *Request, v string) error {
			// A command may span lines; only NUL cannot be in a script.
			if strings.TrimSpace(v) == "" || strings.IndexByte(v, 0) >= 0 {
				return badValue("wrap", v, "give a non-empty shell command")
			}
			r.st.wrap = &v
			return nil
		}},
}

func boolPtr(b bool) *bool { return &b }

func applyArray(r *Request, v string) error {
	a, dup, err := ParseArray(v)
	if err != nil {
		return err
	}
	if dup >= 0 {
		r.note(fmt.Sprintf("--array=%s: index %d is listed more than once; it runs once", v, dup))
	}
	r.Spec.Array = &a
	return nil
}

func applyDependency(r *Request, v string) error {
	d, bb, err := ParseDependency(v)
	if err != nil {
		return err
	}
	if bb {
		r.note("--dependency: afterburstbuffer is read as afterany; " + noBB)
	}
	r.Spec.Dependency = d
	return nil
}

func applyMem(r *Request, v string) error {
	if err := setSize(&r.Spec.MemBytes, "mem", v); err != nil {
		return err
	}
	r.Spec.MemWholeNode = r.Spec.MemBytes == 0 // all of each node's memory, as Slurm
	return nil
}

// applyMemPerCPU: 0 is all of each node's memory, as --mem=0 (Slurm
// submits both as a per-node minimum of 0).
func applyMemPerCPU(r *Request, v string) error {
	if err := setSize(&r.Spec.MemPerCPU, "mem-per-cpu", v); err != nil {
		return err
	}
	r.Spec.MemWholeNode = r.Spec.MemPerCPU == 0
	return nil
}

func applyNodes(r *Request, v string) error {
	lo, hi, err := parseNodes(v)
	if err != nil {
		return err
	}
	if lo > maxCount {
		return fmt.Errorf("--nodes must be at most %d (got %d)", maxCount, lo)
	}
	if hi > lo {
		r.note(fmt.Sprintf("--nodes=%s: corral allocates exactly the minimum, %d node(s)", v, lo))
	}
	r.Spec.Nodes = lo
	return nil
}

func setGPUs(dst *[]api.GresRequest, name, v string) error {
	g, err := parseGPUs(v)
	if err != nil {
		return fmt.Errorf("invalid --%s %s: %v", name, quoteValue(v), err)
	}
	*dst = g
	return nil
}
