package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
)

// srunVersion is what `srun --version` prints. MPI launchers (Open MPI's
// and MPICH's) run it to decide how to bootstrap through srun and which
// option spellings it takes; corral follows Slurm 22.05's srun, so it
// says so.
const srunVersion = "slurm 22.05.8"

// optArg says whether a getopt option takes a value.
type optArg int

const (
	noArg       optArg = iota
	requiredArg        // -n 2, -n2, --ntasks 2, --ntasks=2
	optionalArg        // only glued: -K1, --kill-on-bad-exit=1
)

// getoptOption is one option of a getopt_long table. name is how the
// parsed result calls it: the long name, or the letter without one.
type getoptOption struct {
	short rune
	long  string
	arg   optArg
}

func (o getoptOption) name() string {
	if o.long != "" {
		return o.long
	}
	return string(o.short)
}

// optSet is one option as given, in command-line order.
type optSet struct {
	name     string
	value    string
	hasValue bool
}

// srunOptionTable is every option srun knows, supported or refused with
// its own message: an option missing here is "unrecognized", as in Slurm.
var srunOptionTable = []getoptOption{
	{'N', "nodes", requiredArg},
	{'n', "ntasks", requiredArg},
	{0, "ntasks-per-node", requiredArg},
	{'c', "cpus-per-task", requiredArg},
	{'w', "nodelist", requiredArg},
	{'x', "exclude", requiredArg},
	{'r', "relative", requiredArg},
	{0, "gpus-per-task", requiredArg},
	{0, "mem", requiredArg},
	{0, "overlap", noArg},
	{0, "exact", noArg},
	{0, "exclusive", optionalArg},
	{'m', "distribution", requiredArg},
	{'J', "job-name", requiredArg},
	{'l', "label", noArg},
	{'o', "output", requiredArg},
	{'e', "error", requiredArg},
	{'i', "input", requiredArg},
	{'K', "kill-on-bad-exit", optionalArg},
	{'W', "wait", requiredArg},
	{0, "jobid", requiredArg},
	{'u', "unbuffered", noArg},
	{0, "mpi", requiredArg},
	{0, "cpu-bind", requiredArg},
	{0, "cpu_bind", requiredArg}, // the spelling before Slurm 17.11; launchers still send it
	{0, "pty", noArg},
	{'v', "verbose", noArg},
	{'V', "version", noArg},
	{'h', "help", noArg},
	{0, "usage", noArg},
}

// getopt reads args (without the program name) as glibc's getopt_long
// with a leading "+" does: options stop at the first word that is not
// one (the command) or after "--"; short options bundle (-lK) and take a
// value glued or from the next word; long options take "=value" or the
// next word and may be shortened to a unique prefix.
func getopt(table []getoptOption, args []string) ([]optSet, []string, error) {
	var sets []optSet
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return sets, args[i+1:], nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := lookupLongOption(table, name)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case o.arg == noArg && hasValue:
				return nil, nil, fmt.Errorf("option '--%s' doesn't allow an argument", o.long)
			case o.arg == requiredArg && !hasValue:
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("option '--%s' requires an argument", o.long)
				}
				i++
				value, hasValue = args[i], true
			}
			sets = append(sets, optSet{o.name(), value, hasValue})
		case len(a) > 1 && a[0] == '-':
			letters := a[1:]
			for j, c := range letters {
				o, ok := lookupShortOption(table, c)
				if !ok {
					return nil, nil, fmt.Errorf("invalid option -- '%c'", c)
				}
				rest := letters[j+len(string(c)):]
				if o.arg == noArg {
					sets = append(sets, optSet{name: o.name()})
					continue
				}
				if rest == "" && o.arg == requiredArg {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("option requires an argument -- '%c'", c)
					}
					i++
					rest = args[i]
				}
				sets = append(sets, optSet{o.name(), rest, rest != "" || o.arg == requiredArg})
				break
			}
		default:
			return sets, args[i:], nil
		}
	}
	return sets, nil, nil
}

func lookupShortOption(table []getoptOption, c rune) (getoptOption, bool) {
	for _, o := range table {
		if o.short == c {
			return o, true
		}
	}
	return getoptOption{}, false
}

// lookupLongOption finds name exactly or as the unique prefix of one
// option's long name.
func lookupLongOption(table []getoptOption, name string) (getoptOption, error) {
	var found []getoptOption
	for _, o := range table {
		if o.long == name {
			return o, nil
		}
		if name != "" && strings.HasPrefix(o.long, name) {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return getoptOption{}, fmt.Errorf("unrecognized option '--%s'", name)
	}
	var names []string
	for _, o := range found {
		names = append(names, "'--"+o.long+"'")
	}
	return getoptOption{}, fmt.Errorf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))
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
	wait          time.Duration // -W; 0: no bound
	verbose       int
	version       bool
	help          bool
	mpiList       bool     // --mpi=list
	warnings      []string // accepted options that change nothing, said once on stderr
	argv          []string
}

// errSrunUsage is a command-line mistake: srun prints it and points to
// --help, as Slurm's srun does.
type errSrunUsage struct{ msg string }

func (e errSrunUsage) Error() string { return e.msg }

// parseSrun reads srun's command line (without the program name).
func parseSrun(args []string) (*srunConfig, error) {
	sets, argv, err := getopt(srunOptionTable, args)
	if err != nil {
		return nil, errSrunUsage{err.Error()}
	}
	cfg := &srunConfig{argv: argv}
	for _, s := range sets {
		if err := cfg.apply(s); err != nil {
			return nil, err
		}
	}
	if cfg.version || cfg.help || cfg.mpiList {
		return cfg, nil
	}
	if len(cfg.argv) == 0 {
		return nil, errors.New("no command given to execute")
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
func (cfg *srunConfig) apply(s optSet) error {
	r := &cfg.req
	v := s.value
	var err error
	switch s.name {
	case "nodes":
		r.Nodes, err = positive(s.name, v)
	case "ntasks":
		r.Ntasks, err = positive(s.name, v)
	case "ntasks-per-node":
		r.NtasksPerNode, err = positive(s.name, v)
	case "cpus-per-task":
		r.CPUsPerTask, err = positive(s.name, v)
	case "gpus-per-task":
		r.GPUsPerTask, err = positive(s.name, v)
	case "nodelist":
		r.NodeList, err = nodeNames(s.name, v)
	case "exclude":
		r.Exclude, err = nodeNames(s.name, v)
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
	case "overlap":
		r.Overlap = true
	case "exact":
		r.Exact = true
	case "exclusive":
		if s.hasValue {
			return fmt.Errorf("--exclusive=%s is for allocations; a step takes --exclusive alone", v)
		}
		r.Exact = true
	case "distribution":
		r.Distribution, err = distribution(v)
	case "job-name":
		r.Name = v
	case "label":
		cfg.label = true
	case "output", "error":
		err = checkOutputMode(s.name, v)
		if s.name == "output" {
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
		if s.hasValue && v != "0" && v != "1" {
			return fmt.Errorf("invalid --kill-on-bad-exit %q: give 0 or 1", v)
		}
		cfg.killOnBadExit = !s.hasValue || v == "1"
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
		err = checkMPI(v)
	case "cpu-bind", "cpu_bind":
		if v != "none" && !strings.HasPrefix(v, "verbose") && v != "" {
			cfg.warnings = append(cfg.warnings, fmt.Sprintf("--cpu-bind=%s is ignored: corral does not bind tasks to CPUs", v))
		}
	case "pty":
		return errors.New("--pty is not supported yet")
	case "verbose":
		cfg.verbose++
	case "version":
		cfg.version = true
	case "help", "usage":
		cfg.help = true
	}
	return err
}

func positive(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("invalid --%s %q: give a whole number from 1", name, v)
	}
	return n, nil
}

// nodeNames expands a hostlist (dev[1-2],gpu01), or reads the names from
// a file when the value contains a slash, as Slurm does.
func nodeNames(name, v string) ([]string, error) {
	expr := v
	if strings.Contains(v, "/") {
		data, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", name, err)
		}
		expr = strings.Join(strings.Fields(strings.ReplaceAll(string(data), ",", " ")), ",")
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", name, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("--%s: no node names in %q", name, v)
	}
	return names, nil
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

func checkMPI(v string) error {
	switch {
	case v == "none" || v == "list":
		return nil
	case v == "pmi2" || strings.HasPrefix(v, "pmix") || v == "cray_shasta":
		return fmt.Errorf("--mpi=%s is not supported yet", v)
	}
	return fmt.Errorf("--mpi=%s: unknown MPI type (corral has none)", v)
}

const srunUsage = `Usage: srun [OPTIONS...] executable [args...]

Runs a step of tasks inside the current allocation ($SLURM_JOB_ID or --jobid).

  -N, --nodes=N               number of nodes of the allocation to use
  -n, --ntasks=N              number of tasks
      --ntasks-per-node=N     tasks on each node
  -c, --cpus-per-task=N       CPUs of each task
  -w, --nodelist=HOSTS        nodes to use (hostlist, or a file when it has a /)
  -x, --exclude=HOSTS         nodes not to use
  -r, --relative=N            start at node N of the allocation
      --gpus-per-task=N       GPUs of each task
      --mem=SIZE              memory per node
      --overlap               share the allocation's resources with other steps
      --exact, --exclusive    use only the resources the step asks
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
      --mpi=none              accepted; pmi2 and pmix are not supported yet
      --cpu-bind=TYPE         accepted and ignored (a warning unless none)
  -v, --verbose               say more about the launch
  -V, --version               print the Slurm version srun behaves as
  -h, --help                  this text
`
