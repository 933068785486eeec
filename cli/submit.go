package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

func submitCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "submit",
		Usage:     "submit a batch script (sbatch options and #SBATCH directives)",
		UsageText: "corral submit [options] SCRIPT [ARGS...]\n   corral submit [options] --wrap \"COMMAND\"",
		// jobspec reads sbatch syntax itself: -c4, --mem=1G, and words after
		// the script belong to the script.
		SkipFlagParsing: true,
		HideHelp:        true,
		Action:          submit,
	}
}

// personalityKey, in the App's Metadata, names the Slurm command the app
// runs as ("sbatch" for submit); absent for corral's own commands.
const personalityKey = "slurm-personality"

// sbatchDefaults are sbatch's where corral submit's differ: its output
// file names, and the script read from standard input when none is named.
var sbatchDefaults = jobspec.Defaults{Output: "slurm-%j.out", ArrayOutput: "slurm-%A_%a.out", StdinScript: true}

func submit(c *ucli.Context) error {
	prog, defaults := "corral submit", jobspec.Defaults{}
	sbatch := c.App.Metadata[personalityKey] == "sbatch"
	if sbatch {
		prog, defaults = "sbatch", sbatchDefaults
	}
	req, err := jobspec.ParseWithDefaults(c.Args().Slice(), scriptReader(c.App.Reader), os.LookupEnv, time.Now(), defaults)
	if err != nil {
		return usageError{err}
	}
	if req.Help {
		fmt.Fprintf(out(c), "usage: "+prog+" [options] SCRIPT [ARGS...]\n"+
			"       "+prog+" [options] --wrap \"COMMAND\"\n\n"+
			"Options may also be given in #SBATCH or #CORRAL lines at the top of the\n"+
			"script, and in sbatch's input variables (SBATCH_PARTITION, SBATCH_TIMELIMIT,\n"+
			"... see docs/cli.md). The command line beats the variables, which beat\n"+
			"the script.\n\n%s", jobspec.OptionsHelp())
		return nil
	}
	if req.Version {
		if sbatch {
			fmt.Fprintf(out(c), "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		} else {
			fmt.Fprintf(out(c), "corral %s\n", buildVersion())
		}
		return nil
	}
	if req.TestOnly && req.Wait {
		return usageErrorf("--test-only submits nothing, so there is nothing to --wait for")
	}
	if !req.Quiet {
		for _, w := range req.Warnings {
			fmt.Fprintf(c.App.ErrWriter, "%s: warning: %s\n", prog, w)
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
	ctx, cancel := requestContext(c)
	defer cancel()
	cl := client(c, req.Socket)
	if req.TestOnly {
		return testOnly(c, cl, sub) // wait.go
	}
	id, err := cl.Submit(ctx, sub)
	if err != nil {
		return err
	}
	switch {
	case req.Quiet:
	case req.Parsable:
		fmt.Fprintf(out(c), "%d\n", id)
	default:
		fmt.Fprintf(out(c), "Submitted batch job %d\n", id)
	}
	if req.Wait {
		return waitForEnd(c, cl, id) // wait.go
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
