package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// sbatchDefaults are sbatch's where corral submit's differ: its output
// file names, and the script read from standard input when none is named.
var sbatchDefaults = jobspec.Defaults{Output: "slurm-%j.out", ArrayOutput: "slurm-%A_%a.out", StdinScript: true}

// submitter is one run of corral submit or of sbatch: its name, streams
// and controller. corral submit (appcommands.go) and sbatch (sbatch.go)
// make one each.
type submitter struct {
	ctx            context.Context
	prog           string // "corral submit" or "sbatch", in warnings
	sbatch         bool   // sbatch's defaults, version and --test-only line
	stdin          io.Reader
	stdout, stderr io.Writer
	// client reaches the controller; socket is the job's --socket, "" if
	// none was given.
	client func(socket string) *api.Client
	// testOnly prints a --test-only answer: when the job would start,
	// where, on what (corral submit adds the job as it would be stored).
	testOnly func(stdout, stderr io.Writer, resp *api.TestSubmitResponse) error
}

func (s *submitter) submit(args []string) error {
	prog, defaults := s.prog, jobspec.Defaults{}
	if s.sbatch {
		defaults = sbatchDefaults
	}
	req, err := jobspec.ParseWithDefaults(args, scriptReader(s.stdin), os.LookupEnv, time.Now(), defaults)
	if err != nil {
		return usageError{err}
	}
	if req.Help {
		fmt.Fprintf(s.stdout, "usage: "+prog+" [options] SCRIPT [ARGS...]\n"+
			"       "+prog+" [options] --wrap \"COMMAND\"\n\n"+
			"Options may also be given in #SBATCH or #CORRAL lines at the top of the\n"+
			"script, and in sbatch's input variables (SBATCH_PARTITION, SBATCH_TIMELIMIT,\n"+
			"... see docs/cli.md). The command line beats the variables, which beat\n"+
			"the script.\n\n%s", jobspec.OptionsHelp())
		return nil
	}
	if req.Version {
		if s.sbatch {
			fmt.Fprintf(s.stdout, "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		} else {
			fmt.Fprintf(s.stdout, "corral %s\n", buildVersion())
		}
		return nil
	}
	if req.TestOnly && req.Wait {
		return usageErrorf("--test-only submits nothing, so there is nothing to --wait for")
	}
	if !req.Quiet {
		for _, w := range req.Warnings {
			fmt.Fprintf(s.stderr, "%s: warning: %s\n", prog, w)
		}
	}

	spec := req.Spec
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("cannot determine the current directory: %v", err)
	}
	switch {
	case spec.WorkDir == "":
		spec.WorkDir = cwd
	case !filepath.IsAbs(spec.WorkDir):
		spec.WorkDir = filepath.Join(cwd, spec.WorkDir)
	}
	if st, err := os.Stat(spec.WorkDir); err != nil || !st.IsDir() {
		return usageErrorf("work directory %s does not exist or is not a directory", spec.WorkDir)
	}
	spec.Env = os.Environ()
	spec.SubmitHost, _ = os.Hostname() // unknown: SLURM_SUBMIT_HOST is left unset
	if spec.Umask, err = submitUmask(); err != nil {
		return usageErrorf("%v", err)
	}

	sub := api.SubmitRequest{Spec: spec}
	if req.OnBehalfOf != "" {
		uid, err := lookupUID(req.OnBehalfOf)
		if err != nil {
			return usageError{err}
		}
		sub.OnBehalfOf = &uid
	}
	// The controller's own first checks, in its order (the body's sizes,
	// then the spec's rules): refused here, a job gets the same words and
	// exit status without a round trip.
	if err := api.CheckSizes(&sub); err != nil {
		return usageError{err}
	}
	if err := jobspec.ValidateRules(&sub.Spec); err != nil { // sizes: walked just above
		return usageError{err}
	}
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	cl := s.client(req.Socket)
	if req.TestOnly {
		return s.testOnlySubmit(ctx, cl, sub) // wait.go
	}
	id, err := cl.Submit(ctx, sub)
	if err != nil {
		return err
	}
	switch {
	case req.Quiet:
	case req.Parsable:
		fmt.Fprintf(s.stdout, "%d\n", id)
	default:
		fmt.Fprintf(s.stdout, "Submitted batch job %d\n", id)
	}
	if req.Wait {
		return s.waitForEnd(cl, id) // wait.go
	}
	return nil
}

// buildVersion is the corral module's version as built ("(devel)" for a
// build from a checkout).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(unknown)"
}

// scriptReader reads a script file, or stdin for "-", refusing to read
// more than jobspec accepts.
func scriptReader(stdin io.Reader) jobspec.ReadFunc {
	return func(path string) ([]byte, error) {
		var r io.Reader
		if path == "-" {
			if stdin == nil {
				stdin = os.Stdin
			}
			r = stdin
		} else {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if st, err := f.Stat(); err == nil && st.IsDir() {
				return nil, errors.New("it is a directory")
			}
			r = f
		}
		return io.ReadAll(io.LimitReader(r, jobspec.MaxScriptBytes+1))
	}
}

// lookupUID resolves --uid: a numeric uid as is, or a user name.
func lookupUID(s string) (uint32, error) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(s)
	if err != nil {
		return 0, fmt.Errorf("invalid --uid %q: no such user", s)
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid --uid %q: user has non-numeric uid %q", s, u.Uid)
	}
	return uint32(n), nil
}

// lookupGID resolves a group as --gid takes it: a number as is, or a
// group name.
func lookupGID(s string) (uint32, error) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), nil
	}
	g, err := user.LookupGroup(s)
	if err != nil {
		return 0, fmt.Errorf("invalid --gid %q: no such group", s)
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid --gid %q: group has non-numeric gid %q", s, g.Gid)
	}
	return uint32(n), nil
}

// submitUmask is the job's umask: SLURM_UMASK, else this process's own.
func submitUmask() (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", fmt.Errorf("cannot read this process's umask: %v", err)
	}
	defer f.Close()
	current, err := jobspec.ProcessUmask(f)
	if err != nil {
		return "", fmt.Errorf("cannot read this process's umask from /proc/self/status: %v", err)
	}
	return jobspec.SubmitUmask(os.LookupEnv, current)
}
