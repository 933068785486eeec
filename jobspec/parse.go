package jobspec

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corral-hpc/corral/api"
)

// DefaultOutput is the output pattern of a job that names none (sbatch's
// slurm-%j.out, renamed).
const DefaultOutput = "corral-%j.out"

// DefaultArrayOutput is the output pattern of an array job that names none
// (sbatch's slurm-%A_%a.out): one file per task.
const DefaultArrayOutput = "corral-%A_%a.out"

// MaxScriptBytes bounds a batch script (api.ValidateScript checks it, on
// both sides of the socket).
const MaxScriptBytes = api.MaxScriptBytes

// Request is a parsed submission: the job spec plus what only the client
// needs to know.
type Request struct {
	// Spec is complete except for WorkDir when no --chdir was given and for
	// Env: the caller fills those from its own process. A relative WorkDir
	// is relative to the caller's current directory.
	Spec api.JobSpec
	// ScriptPath is the script as named on the command line; "" with --wrap.
	ScriptPath string
	Parsable   bool
	// OnBehalfOf is --uid as given: a user name or a numeric uid; the caller
	// resolves names (jobspec reads no user database).
	OnBehalfOf string
	Socket     string
	// Help is set by -h, --help and --usage; Version by -V. Nothing else is
	// filled then.
	Help    bool
	Version bool
	// Wait (-W) asks the client to wait for the job to end and exit with
	// its status; TestOnly asks the controller to check the job and
	// estimate its start without submitting it. Both need the controller's
	// help; jobspec only records them.
	Wait     bool
	TestOnly bool
	// Quiet (-Q) asks the client to print nothing but errors.
	Quiet bool
	// Warnings are one-line notes for the user (ignored options, ...).
	Warnings []string

	st *parseState // only while parsing
}

// parseState is what parsing needs besides the result.
type parseState struct {
	wrap *string
	now  time.Time
	// given records every option set, in the script or on the command
	// line, by long name: sbatch's conflicts (--mem with --mem-per-cpu)
	// count both places.
	given map[string]bool
	// current is the option being applied; notes are the warnings its
	// value earned, by option, so that a later value replaces them.
	current  string
	notes    map[string]string
	noteKeys []string
	// ignored are the ignored options used, in order of first use.
	ignored []string
	minCPUs int
}

func newRequest(now time.Time) *Request {
	return &Request{st: &parseState{now: now, given: map[string]bool{}, notes: map[string]string{}}}
}

// note records a warning about the value of the option being applied.
func (r *Request) note(msg string) {
	st := r.st
	if !slices.Contains(st.noteKeys, st.current) {
		st.noteKeys = append(st.noteKeys, st.current)
	}
	st.notes[st.current] = msg
}

// ReadFunc returns the contents of the script at path.
type ReadFunc func(path string) ([]byte, error)

// Parse is ParseWith this process's environment and the current time:
// --begin resolves against it.
func Parse(args []string, read ReadFunc) (*Request, error) {
	return ParseWith(args, read, os.LookupEnv, time.Now())
}

// ParseAt is ParseWith no input environment variables.
func ParseAt(args []string, read ReadFunc, now time.Time) (*Request, error) {
	return ParseWith(args, read, nil, now)
}

// ParseWith reads `corral submit` arguments: options, then the script path
// and the script's own arguments. The script's #SBATCH/#CORRAL directives
// are applied first, then sbatch's input environment variables read
// through env (env.go), then the command line, each overriding the ones
// before, as with sbatch. Relative --begin times resolve against now.
// Every error is one line naming the option (and the script line or the
// variable) at fault.
func ParseWith(args []string, read ReadFunc, env LookupFunc, now time.Time) (*Request, error) {
	return ParseWithDefaults(args, read, env, now, Defaults{})
}

// Defaults are what a submission gets where it says nothing; corral
// submit's and sbatch's differ.
type Defaults struct {
	// Output and ArrayOutput are the output patterns of a job and an
	// array job without -o; "" means DefaultOutput and DefaultArrayOutput.
	Output, ArrayOutput string
	// StdinScript: without a script or --wrap, the script is read from
	// standard input ("-"), as sbatch reads it.
	StdinScript bool
}

// ParseWithDefaults is ParseWith with other defaults than corral
// submit's.
func ParseWithDefaults(args []string, read ReadFunc, env LookupFunc, now time.Time, d Defaults) (*Request, error) {
	cmdline, rest, err := parseOptions(args, true)
	if err != nil {
		return nil, err
	}
	// Apply the command line once on its own: its mistakes are reported
	// before the script is even read, and help short-circuits everything.
	probe := newRequest(now)
	if err := applyAll(probe, cmdline); err != nil {
		return nil, err
	}
	if probe.Help || probe.Version {
		return &Request{Help: probe.Help, Version: probe.Version && !probe.Help}, nil
	}
	if err := checkConflicts(probe); err != nil {
		return nil, err
	}

	r := newRequest(now)
	var script string
	var directives scan
	switch {
	case probe.st.wrap != nil && len(rest) > 0:
		return nil, fmt.Errorf("--wrap cannot be used together with a script (got %s)", show(rest[0]))
	case probe.st.wrap != nil:
		script = "#!/bin/sh\n" + *probe.st.wrap + "\n"
		if err := api.ValidateScript("--wrap command", script); err != nil {
			return nil, err
		}
		r.Spec.Name = "wrap"
	case len(rest) == 0 && !d.StdinScript:
		return nil, errors.New(`missing script: give a script file or --wrap "COMMAND"`)
	default:
		if len(rest) == 0 {
			rest = []string{"-"}
		}
		path := rest[0]
		if script, err = readScript(path, read); err != nil {
			return nil, err
		}
		if directives, err = scanDirectives(script); err != nil {
			return nil, scriptLineError(path, err)
		}
		r.ScriptPath = path
		if len(rest) > 1 {
			r.Spec.Args = rest[1:]
		}
		r.Spec.Name = DefaultJobName(filepath.Base(path))
		if path == "-" {
			r.Spec.Name = "stdin"
		}
	}

	for _, d := range directives.directives {
		sets, _, err := parseOptions(d.args, false)
		if err == nil {
			err = checkDirectiveSettings(sets)
		}
		if err == nil {
			err = applyAll(r, sets)
		}
		if err != nil {
			return nil, scriptLineError(r.ScriptPath, &LineError{Line: d.line, Err: err})
		}
	}
	envSets, err := envSettings(env, envOptions)
	if err != nil {
		return nil, err
	}
	if err := applyEnv(r, envSets); err != nil {
		return nil, err
	}
	if err := applyAll(r, cmdline); err != nil {
		return nil, err // cannot happen: probe accepted the same settings
	}
	if err := checkConflicts(r); err != nil {
		return nil, err
	}
	if err := resolveResources(r); err != nil {
		return nil, err
	}
	if n := len(directives.late); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"script %s: %d directive line(s) after the first command are ignored (first at line %d)",
			show(r.ScriptPath), n, directives.late[0]))
	}
	for _, name := range r.st.ignored {
		r.Warnings = append(r.Warnings, fmt.Sprintf("--%s is ignored: %s", name, optionByName(name).ignore))
	}
	for _, name := range r.st.noteKeys {
		if msg, ok := r.st.notes[name]; ok {
			r.Warnings = append(r.Warnings, msg)
		}
	}

	r.Spec.Script = script
	r.st = nil
	if r.Spec.Output == "" {
		r.Spec.Output = cmp.Or(d.Output, DefaultOutput)
		if r.Spec.Array != nil {
			r.Spec.Output = cmp.Or(d.ArrayOutput, DefaultArrayOutput)
		}
	}
	return r, nil
}

func applyAll(r *Request, sets []setting) error {
	for _, s := range sets {
		st := r.st
		st.given[s.opt.long] = true
		if s.opt.ignore != "" {
			if s.opt.check != nil {
				if err := s.opt.check(s.value); err != nil {
					return err
				}
			}
			if !slices.Contains(st.ignored, s.opt.long) {
				st.ignored = append(st.ignored, s.opt.long)
			}
			continue
		}
		st.current = s.opt.long
		delete(st.notes, s.opt.long)
		if err := s.opt.apply(r, s.value); err != nil {
			return err
		}
	}
	return nil
}

func checkDirectiveSettings(sets []setting) error {
	for _, s := range sets {
		if s.opt.commandLineOnly {
			return fmt.Errorf("--%s can only be given on the command line", s.opt.long)
		}
	}
	return nil
}

func readScript(path string, read ReadFunc) (string, error) {
	data, err := read(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("cannot read script %s: %v", show(path), err)
	}
	// The controller runs the same check (ctld/submit.go).
	if err := api.ValidateScript("script "+show(path), string(data)); err != nil {
		return "", err
	}
	// As Slurm's sbatch: the kernel runs a script only by its #! line,
	// and a file without one is more likely a mistaken argument (a data
	// file, a binary's name) than a batch script.
	if !strings.HasPrefix(string(data), "#!") {
		return "", fmt.Errorf("script %s does not look like a batch script: its first line must start with #! and an interpreter, such as #!/bin/sh", show(path))
	}
	return string(data), nil
}

func scriptLineError(path string, err error) error {
	path = show(path)
	var le *LineError
	if errors.As(err, &le) {
		return fmt.Errorf("script %s line %d: %v", path, le.Line, le.Err)
	}
	return fmt.Errorf("script %s: %v", path, err)
}

// show prints a user-supplied word as is when that is safe on one line, and
// quoted otherwise, so that no error message ever spans lines.
func show(s string) string {
	for _, c := range s {
		if c < ' ' || c == 0x7f || c == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}
