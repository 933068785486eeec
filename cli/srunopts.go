package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/slurmopt"
)

// srunOptionTable is every option srun knows, supported, ignored with a
// warning (srunoptlists.go) or refused with its own message: an option
// missing here is "unrecognized", as in Slurm.
var srunOptionTable = slices.Concat(srunStepOptions, srunAllocOptions, srunIgnoredOptions)

// srunStepOptions are the options srun acts on itself.
var srunStepOptions = []slurmopt.Option{
	{Short: 'N', Long: "nodes", Arg: slurmopt.RequiredArg},
	{Short: 'n', Long: "ntasks", Arg: slurmopt.RequiredArg},
	{Long: "ntasks-per-node", Arg: slurmopt.RequiredArg},
	{Short: 'c', Long: "cpus-per-task", Arg: slurmopt.RequiredArg},
	{Short: 'w', Long: "nodelist", Arg: slurmopt.RequiredArg},
	{Short: 'x', Long: "exclude", Arg: slurmopt.RequiredArg},
	{Short: 'r', Long: "relative", Arg: slurmopt.RequiredArg},
	{Long: "gpus-per-task", Arg: slurmopt.RequiredArg},
	{Long: "mem", Arg: slurmopt.RequiredArg},
	{Long: "overlap"},
	{Long: "exact"},
	{Long: "exclusive", Arg: slurmopt.OptionalArg},
	{Short: 'm', Long: "distribution", Arg: slurmopt.RequiredArg},
	{Short: 'J', Long: "job-name", Arg: slurmopt.RequiredArg},
	{Short: 'l', Long: "label"},
	{Short: 'o', Long: "output", Arg: slurmopt.RequiredArg},
	{Short: 'e', Long: "error", Arg: slurmopt.RequiredArg},
	{Short: 'i', Long: "input", Arg: slurmopt.RequiredArg},
	{Short: 'K', Long: "kill-on-bad-exit", Arg: slurmopt.OptionalArg},
	{Short: 'W', Long: "wait", Arg: slurmopt.RequiredArg},
	{Long: "jobid", Arg: slurmopt.RequiredArg},
	{Short: 'u', Long: "unbuffered"},
	{Long: "mpi", Arg: slurmopt.RequiredArg},
	{Long: "cpu-bind", Arg: slurmopt.RequiredArg},
	{Long: "cpu_bind", Arg: slurmopt.RequiredArg}, // the spelling before Slurm 17.11; launchers still send it
	{Long: "pty"},
	{Long: "export", Arg: slurmopt.RequiredArg},
	{Short: 'D', Long: "chdir", Arg: slurmopt.RequiredArg},
	{Short: 'Q', Long: "quiet"},
	{Long: "mem-per-cpu", Arg: slurmopt.RequiredArg},
	{Long: "gres", Arg: slurmopt.RequiredArg},
	{Long: "gpus-per-node", Arg: slurmopt.RequiredArg},
	{Short: 'F', Long: "nodefile", Arg: slurmopt.RequiredArg},
	{Long: "open-mode", Arg: slurmopt.RequiredArg},
	{Long: "multi-prog"},
	{Long: "het-group", Arg: slurmopt.RequiredArg},
	{Long: "test-only"},
	{Short: 'Z', Long: "no-allocate"},
	{Short: 'I', Long: "immediate", Arg: slurmopt.OptionalArg},
	{Short: 'v', Long: "verbose"},
	{Short: 'V', Long: "version"},
	{Short: 'h', Long: "help"},
	{Long: "usage"},
}

// srunConfig is a parsed srun command line.
type srunConfig struct {
	req           api.StepRequest
	jobID         uint64 // --jobid; 0: from $SLURM_JOB_ID
	label         bool
	output        string // -o: "" (to srun's stdout), "none", a task number or a file pattern
	errput        string // -e, as output
	input         string // -i: "" or "0" (task 0) or "none"
	killOnBadExit bool
	pty           bool          // task 0 on a terminal
	wait          time.Duration // -W; 0: no bound
	verbose       int
	version       bool
	help          bool
	mpiList       bool     // --mpi=list
	mpi           string   // --mpi: "" (not given: the cluster's MpiDefault), none or pmi2
	warnings      []string // accepted options that change nothing, said once on stderr
	notes         []string // Slurm's notices about counts srun adjusted
	argv          []string
	// allocArgs are the options only an allocation takes (-A, -p, -t,
	// ...), in sbatch's spelling; allocOnly their names.
	allocArgs []string
	allocOnly []string
	// exclusive is --exclusive[=user] as an allocation takes it: srun
	// outside one passes it on; inside one, only the bare option (a step's
	// --exact) is meaningful. memAll is --mem=0, passed on likewise.
	exclusive string
	memAll    bool
	// export is --export for the tasks' environment (nil: ALL); chdir
	// their working directory ("": srun's); quiet -Q; appendOutput
	// --open-mode=append for -o/-e files; multiProg --multi-prog.
	export       *api.EnvExport
	chdir        string
	quiet        bool
	appendOutput bool
	multiProg    bool
	// memPerCPU (--mem-per-cpu) and gpusPerNode (--gres=gpu:N,
	// --gpus-per-node) become the step's per-node memory and GPUs per
	// task once its counts are settled (perNode).
	memPerCPU   int64
	gpusPerNode int64
	gpusGiven   string // the option that gave gpusPerNode
	// immediate is -I[SECONDS]: give up when the allocation (outside
	// one) or the step's nodes are not had in time; 0: wait.
	immediate time.Duration
}

// errSrunUsage is a command-line mistake: srun prints it and points to
// --help, as Slurm's srun does.
type errSrunUsage struct{ msg string }

func (e errSrunUsage) Error() string { return e.msg }

// parseSrun reads srun's command line (without the program name) over
// the options its environment gives.
func parseSrun(args []string, getenv func(string) string) (*srunConfig, error) {
	r, err := slurmopt.Parse(srunOptionTable, args, true)
	if err != nil {
		return nil, errSrunUsage{err.Error()}
	}
	cfg := &srunConfig{argv: r.Args}
	if r.Has("help") || r.Has("usage") || r.Has("version") {
		cfg.help, cfg.version = !r.Has("version"), r.Has("version")
		return cfg, nil
	}
	if err := cfg.applyInputEnv(getenv); err != nil {
		return nil, err
	}
	for _, s := range r.Sets {
		if err := cfg.apply(s); err != nil {
			return nil, err
		}
	}
	if cfg.version || cfg.help || cfg.mpiList {
		return cfg, nil
	}
	if cfg.pty {
		// Slurm: --pty sends the output of every task but 0 to /dev/null.
		cfg.output = cmp.Or(cfg.output, "0")
		cfg.errput = cmp.Or(cfg.errput, "0")
	}
	if len(cfg.argv) == 0 {
		return nil, errors.New("no command given to execute")
	}
	cfg.reconcileCounts()
	if err := cfg.perNode(); err != nil {
		return nil, err
	}
	if cfg.multiProg {
		if err := cfg.loadMultiProg(); err != nil { // srunmultiprog.go
			return nil, err
		}
	}
	if cfg.req.Name == "" {
		cfg.req.Name = cfg.argv[0]
		if i := strings.LastIndexByte(cfg.req.Name, '/'); i >= 0 && i+1 < len(cfg.req.Name) {
			cfg.req.Name = cfg.req.Name[i+1:]
		}
	}
	return cfg, nil
}

// apply sets one option; a bad value is an error naming the option.
func (cfg *srunConfig) apply(s slurmopt.Set) error {
	r := &cfg.req
	v := s.Value
	var err error
	switch s.Name {
	case "nodes":
		// MIN-MAX: at least MIN nodes, at most MAX. A step takes as many
		// as its tasks and the allocation allow, as Slurm's; an
		// allocation srun makes gets MIN.
		if lo, hi, ok := intRange(v); ok && lo >= 1 && strings.Contains(v, "-") && hi >= lo {
			r.Nodes, r.NodesMin = hi, lo
			break
		}
		r.NodesMin = 0
		r.Nodes, err = positive(s.Name, v)
	case "ntasks":
		r.Ntasks, err = positive(s.Name, v)
	case "ntasks-per-node":
		r.NtasksPerNode, err = positive(s.Name, v)
	case "cpus-per-task":
		r.CPUsPerTask, err = positive(s.Name, v)
	case "gpus-per-task":
		r.GPUsPerTask, err = positive(s.Name, v)
	case "nodelist":
		r.NodeList, err = jobspec.NodeNames(s.Name, v)
	case "exclude":
		r.Exclude, err = jobspec.NodeNames(s.Name, v)
	case "relative":
		n, e := strconv.Atoi(v)
		if e != nil || n < 0 {
			return fmt.Errorf("invalid --relative %q: give a node index from 0", v)
		}
		r.Relative = &n
	case "mem":
		r.MemBytes, err = jobspec.ParseSize(v)
		if err != nil {
			err = fmt.Errorf("--mem: %v", err)
		}
		cfg.memAll = err == nil && r.MemBytes == 0
	case "overlap":
		r.Overlap = true
	case "exact":
		r.Exact = true
	case "exclusive":
		cfg.exclusive = "--exclusive"
		if s.HasValue {
			cfg.exclusive += "=" + v
		} else {
			r.Exact = true
		}
	case "distribution":
		r.Distribution, err = distribution(v)
	case "job-name":
		r.Name = v
	case "label":
		cfg.label = true
	case "output", "error":
		err = checkOutputMode(s.Name, v)
		if s.Name == "output" {
			cfg.output = v
		} else {
			cfg.errput = v
		}
	case "input":
		if v != "0" && v != "none" {
			return fmt.Errorf("--input=%s is not supported yet: standard input goes to task 0 (--input=0) or nowhere (--input=none)", v)
		}
		cfg.input = v
	case "kill-on-bad-exit":
		if s.HasValue && v != "0" && v != "1" {
			return fmt.Errorf("invalid --kill-on-bad-exit %q: give 0 or 1", v)
		}
		cfg.killOnBadExit = !s.HasValue || v == "1"
	case "wait":
		n, e := strconv.Atoi(v)
		if e != nil || n < 0 {
			return fmt.Errorf("invalid --wait %q: give seconds", v)
		}
		cfg.wait = time.Duration(n) * time.Second
	case "jobid":
		cfg.jobID, err = strconv.ParseUint(v, 10, 64)
		if err != nil || cfg.jobID == 0 {
			return fmt.Errorf("invalid --jobid %q", v)
		}
	case "unbuffered":
		// Output is relayed as it arrives already.
	case "mpi":
		cfg.mpiList = v == "list"
		err = checkMPI(v) // srunpmi.go
		if v != "list" {
			cfg.mpi = v
		}
	case "cpu-bind", "cpu_bind":
		if !cpuBindHarmless(v) {
			cfg.warnings = append(cfg.warnings, fmt.Sprintf("--cpu-bind=%s is ignored: corral does not bind tasks to CPUs", v))
		}
	case "pty":
		cfg.pty = true
	case "export":
		cfg.export, err = jobspec.ParseExport(v)
	case "chdir":
		cfg.chdir = v
	case "quiet":
		cfg.quiet = true
	case "mem-per-cpu":
		cfg.memPerCPU, err = jobspec.ParseSize(v)
		if err != nil {
			err = fmt.Errorf("--mem-per-cpu: %v", err)
		}
		cfg.memAll = err == nil && cfg.memPerCPU == 0 // as --mem=0: all the job's memory
	case "gres":
		var list []api.GresRequest
		if list, err = jobspec.ParseGres(v); err != nil {
			return fmt.Errorf("invalid --gres %q: %v", v, err)
		}
		for _, g := range list {
			if g.Name != "gpu" {
				return fmt.Errorf("--gres=%s: a step takes only gpu from its allocation's generic resources", v)
			}
		}
		cfg.gpusPerNode, cfg.gpusGiven = jobspec.GPUCount(list), "--gres="+v
	case "gpus-per-node":
		var list []api.GresRequest
		if list, err = jobspec.ParseGres("gpu:" + v); err != nil {
			return fmt.Errorf("invalid --gpus-per-node %q: %v", v, err)
		}
		cfg.gpusPerNode, cfg.gpusGiven = jobspec.GPUCount(list), "--gpus-per-node="+v
	case "nodefile":
		if !strings.Contains(v, "/") {
			v = "./" + v // jobspec.NodeNames reads a value with a / as a file
		}
		r.NodeList, err = jobspec.NodeNames("nodefile", v)
	case "open-mode":
		switch { // as Slurm's srun: the first letter decides (SLURM_OPEN_MODE is "a" or "t")
		case strings.HasPrefix(v, "a") || strings.HasPrefix(v, "A"):
			cfg.appendOutput = true
		case strings.HasPrefix(v, "t") || strings.HasPrefix(v, "T"):
			cfg.appendOutput = false
		default:
			return fmt.Errorf("invalid --open-mode %q: give append or truncate", v)
		}
	case "multi-prog":
		cfg.multiProg = true
	case "immediate":
		cfg.immediate, err = immediateWait(v, s.HasValue) // sallocopts.go
	case "het-group":
		// As Slurm's srun in a job that is not heterogeneous: refused.
		return fmt.Errorf("--het-group=%s: corral has no heterogeneous jobs", v)
	case "test-only":
		return errors.New("--test-only is not supported by corral's srun: ask sbatch --test-only when a job would start")
	case "no-allocate":
		return errors.New("--no-allocate is not supported: corral runs a step only in an allocation")
	case "verbose":
		cfg.verbose++
	case "version":
		cfg.version = true
	case "help", "usage":
		cfg.help = true
	default:
		if why, ok := srunIgnored[s.Name]; ok {
			cfg.warnings = append(cfg.warnings, fmt.Sprintf("--%s is ignored: %s", s.Name, why))
			break
		}
		if isAllocOption(s.Name) { // srunoptlists.go: for the allocation
			arg := "--" + s.Name
			if s.HasValue {
				arg += "=" + v
			}
			cfg.allocArgs = append(cfg.allocArgs, arg)
			cfg.allocOnly = append(cfg.allocOnly, s.Name)
		}
	}
	return err
}

// perNode turns --mem-per-cpu and a per-node GPU count into the step's
// per-node memory and GPUs per task, over the tasks its counts put on a
// node.
func (cfg *srunConfig) perNode() error {
	r := &cfg.req
	tasks := 1 // on each node
	switch {
	case r.NtasksPerNode > 0:
		tasks = r.NtasksPerNode
	case r.Ntasks > 0 && r.Nodes > 0:
		tasks = (r.Ntasks + r.Nodes - 1) / r.Nodes
	case r.Ntasks > 0:
		tasks = r.Ntasks
	}
	if cfg.memPerCPU > 0 {
		if r.MemBytes > 0 || cfg.memAll {
			return errors.New("--mem and --mem-per-cpu are mutually exclusive")
		}
		r.MemBytes = cfg.memPerCPU * int64(max(r.CPUsPerTask, 1)*tasks)
	}
	if cfg.gpusGiven != "" {
		switch {
		case r.GPUsPerTask > 0:
			return fmt.Errorf("--gpus-per-task and %s are mutually exclusive", cfg.gpusGiven)
		case cfg.gpusPerNode == 0: // --gres=none: no GPUs asked
		case cfg.gpusPerNode%int64(tasks) != 0:
			return fmt.Errorf("%s: %d GPUs on a node do not divide among its %d tasks; use --gpus-per-task", cfg.gpusGiven, cfg.gpusPerNode, tasks)
		default:
			r.GPUsPerTask = int(cfg.gpusPerNode / int64(tasks))
		}
	}
	return nil
}

func positive(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("invalid --%s %q: give a whole number from 1", name, v)
	}
	return n, nil
}

// distribution takes Slurm's first level only: tasks over nodes.
func distribution(v string) (string, error) {
	first, _, _ := strings.Cut(v, ":")
	switch first {
	case "block", "cyclic":
		return first, nil
	case "*":
		return "block", nil
	}
	return "", fmt.Errorf("--distribution=%s is not supported: use block or cyclic", v)
}

func checkOutputMode(name, v string) error {
	if v == "" {
		return fmt.Errorf("--%s needs a file name pattern, none, all or a task number", name)
	}
	_, err := expandOutputPattern(v, outputFields{})
	if err != nil {
		return fmt.Errorf("--%s: %v", name, err)
	}
	return nil
}

const srunUsage = `Usage: srun [OPTIONS...] executable [args...]

Runs a step of tasks inside the current allocation ($SLURM_JOB_ID or --jobid).

  -N, --nodes=N[-MAX]         number of nodes of the allocation to use (of a range, N)
  -n, --ntasks=N              number of tasks
      --ntasks-per-node=N     tasks on each node
  -c, --cpus-per-task=N       CPUs of each task
  -w, --nodelist=HOSTS        nodes to use (hostlist, or a file when it has a /)
  -x, --exclude=HOSTS         nodes not to use
  -r, --relative=N            start at node N of the allocation
      --gpus-per-task=N       GPUs of each task
      --mem=SIZE              memory per node (0: all of it, outside an allocation)
      --overlap               share the allocation's resources with other steps
      --exact, --exclusive    use only the resources the step asks; outside an
                              allocation: the nodes to the job (=user: shared with your jobs only)
  -m, --distribution=TYPE     block (default) or cyclic
  -J, --job-name=NAME         the step's name (default: the command)
  -l, --label                 prefix each output line with its task number
  -o, --output=PATTERN        write output to files (%t %n %N %j %s %%), none or a task number
  -e, --error=PATTERN         as --output for standard error
  -i, --input=MODE            standard input to task 0 (0, the default) or none
  -K, --kill-on-bad-exit      end the step when a task fails
  -W, --wait=SECONDS          end the step this long after its first task ended
      --jobid=ID              run in this job's allocation
  -u, --unbuffered            accepted: output is always relayed as it comes
      --mpi=TYPE              none, or pmi2: serve PMI to MPICH programs (list: the types)
      --cpu-bind=TYPE         accepted and ignored (a warning unless none, quiet, verbose)
      --pty                   run task 0 on a terminal; srun's terminal is raw meanwhile
      --export=ALL|NONE|VARS  the tasks' environment (as sbatch --export)
  -D, --chdir=DIR             the tasks' working directory
  -Q, --quiet                 no warnings or notices
      --mem-per-cpu=SIZE      memory per CPU of the step's tasks (instead of --mem)
      --gres=gpu:N, --gpus-per-node=N  GPUs on each node, shared by its tasks
  -F, --nodefile=FILE         the nodes listed in FILE
      --open-mode=MODE        append or truncate (default) -o/-e files
      --multi-prog            the command is a file: each task runs its line's program
  -I, --immediate[=SECONDS]   do not wait for busy nodes (or an allocation)
  -v, --verbose               say more about the launch
  -V, --version               print the Slurm version srun behaves as
  -h, --help                  this text
Slurm's other srun options are taken too: those of the allocation srun makes
outside one (-A, -p, -t, -q, -C, --begin, ...), and the rest with a warning
saying why corral ignores them (docs/steps.md).
`

// cpuBindHarmless reports whether a --cpu-bind value asks no binding
// corral would owe: only Slurm's reporting words (q[uiet], v[erbose]) and
// no[ne]. Snakemake's slurm executor sends --cpu-bind=q with every step.
func cpuBindHarmless(v string) bool {
	for _, w := range strings.Split(v, ",") {
		switch w {
		case "", "q", "quiet", "v", "verbose", "no", "none":
		default:
			return false
		}
	}
	return true
}
