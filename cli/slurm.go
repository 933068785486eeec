package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmopt"
)

// SlurmVersion is the Slurm release whose commands corral's Slurm names
// follow; --version prints it for scripts that check for a Slurm.
const SlurmVersion = "22.05.0"

// slurmCommand is one Slurm command corral answers to under its name.
type slurmCommand struct {
	opts []slurmopt.Option
	// stopAtArg: the first argument ends the options (sbatch's script).
	stopAtArg bool
	usage     string // the --help text
	run       func(s *slurmRun, r *slurmopt.Result) error
}

// slurmCommands are the Slurm names the corral binary answers to; the
// Makefile links bin/slurm/<name> to bin/corral for each.
func slurmCommands() map[string]*slurmCommand {
	return map[string]*slurmCommand{
		"sbatch":   sbatchCommand(),
		"squeue":   squeueCommand(),
		"scancel":  scancelCommand(),
		"sacct":    sacctCommand(),
		"sacctmgr": sacctmgrCommand(),
		"sinfo":    sinfoCommand(),
		"scontrol": scontrolCommand(),
		"sprio":    sprioCommand(),
		"sshare":   sshareCommand(),
		"sstat":    sstatCommand(),
		"srun":     srunPersonality(),
		"salloc":   sallocPersonality(),
	}
}

// SlurmNames lists the Slurm names corral answers to, sorted.
func SlurmNames() []string {
	var names []string
	for name := range slurmCommands() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// IsSlurmName reports whether the binary called name (its base name)
// should behave as that Slurm command.
func IsSlurmName(name string) bool {
	_, ok := slurmCommands()[name]
	return ok
}

// slurmRun is one run of a Slurm command: its name, streams and
// controller.
type slurmRun struct {
	prog   string
	ctx    context.Context
	stdin  io.Reader
	stdout *bufio.Writer
	stderr io.Writer
	cl     *api.Client
}

// client is the controller client, made on first use: $CORRAL_SOCKET, or
// over TCP when $CORRAL_CTLD is set, as corral's own commands default.
func (s *slurmRun) client() *api.Client {
	if s.cl == nil {
		if base := os.Getenv(api.CtldEnv); base != "" && os.Getenv(api.SocketEnv) == "" {
			s.cl = remoteClientWith(base, envCAPath())
		} else {
			s.cl = api.NewOneShotClient(api.ResolveSocket(""))
		}
	}
	return s.cl
}

func (s *slurmRun) requestContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, requestTimeout)
}

// slurmError is an error in Slurm's own words, which often begin with
// a capital ("Invalid job id specified").
type slurmError string

func (e slurmError) Error() string { return string(e) }

func slurmErrorf(format string, args ...any) error {
	return slurmError(fmt.Sprintf(format, args...))
}

// slurmUsage is a command-line mistake: Slurm prints it after the
// command's name and points to --help.
type slurmUsage struct{ msg string }

func (e slurmUsage) Error() string { return e.msg }

func slurmUsagef(format string, args ...any) error {
	return slurmUsage{fmt.Sprintf(format, args...)}
}

// RunSlurm runs the Slurm command name with args (without the program
// name) and returns its exit status: 0, or 1 for any error, as Slurm's
// commands exit.
func RunSlurm(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, ok := slurmCommands()[name]
	if !ok {
		fmt.Fprintf(stderr, "corral: %s is not a Slurm command corral provides\n", name)
		return 1
	}
	s := &slurmRun{prog: name, ctx: ctx, stdin: stdin, stdout: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr}
	err := runSlurm(s, cmd, args)
	if ferr := s.stdout.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err == nil {
		return 0
	}
	var quiet exitStatus
	var usage slurmUsage
	var getopt *slurmopt.Error
	switch {
	case errors.As(err, &quiet):
		return int(quiet)
	case errors.As(err, &getopt):
		fmt.Fprintf(stderr, "%s: %s\nTry \"%s --help\" for more information\n", name, getopt.Msg, name)
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "%s: error: %s\nTry \"%s --help\" for more information\n", name, oneLine(usage.msg), name)
	default:
		fmt.Fprintf(stderr, "%s: error: %s\n", name, oneLine(err.Error()))
	}
	return 1
}

func runSlurm(s *slurmRun, cmd *slurmCommand, args []string) error {
	if cmd.opts == nil { // the command reads its own arguments
		return cmd.run(s, &slurmopt.Result{Args: args})
	}
	r, err := slurmopt.Parse(cmd.opts, args, cmd.stopAtArg)
	if err != nil {
		return err
	}
	switch {
	case r.Has("help") || r.Has("usage"):
		_, err := io.WriteString(s.stdout, cmd.usage)
		return err
	case r.Has("version"):
		_, err := fmt.Fprintf(s.stdout, "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		return err
	}
	return cmd.run(s, r)
}

// srunPersonality is corral srun under srun's name; it reads its own
// options and prints its own errors in Slurm's words.
func srunPersonality() *slurmCommand {
	return &slurmCommand{run: func(s *slurmRun, r *slurmopt.Result) error {
		env := srunEnv{stdin: s.stdin, stdout: flushingWriter{s.stdout}, stderr: s.stderr, // srun.go
			getenv: os.Getenv, environ: os.Environ, client: s.client}
		if code := runSrun(s.ctx, env, r.Args); code != 0 {
			return exitStatus(code)
		}
		return nil
	}}
}

// commonOpts are the options every Slurm command takes.
var commonOpts = []slurmopt.Option{
	{Long: "help"}, {Long: "usage"}, {Short: 'V', Long: "version"},
}

// withCommon is opts plus the commonOpts they do not define themselves
// (sacct's -h is --help).
func withCommon(opts ...slurmopt.Option) []slurmopt.Option {
	for _, c := range commonOpts {
		if !slices.ContainsFunc(opts, func(o slurmopt.Option) bool { return o.Long == c.Long }) {
			opts = append(opts, c)
		}
	}
	return opts
}

// leadingDigits is the digits s starts with, after blanks: what C's atoi
// reads, with which Slurm's commands take numbers ("5s" is 5).
func leadingDigits(s string) string {
	s = strings.TrimLeft(s, " \t")
	return s[:len(s)-len(strings.TrimLeft(s, "0123456789"))]
}
