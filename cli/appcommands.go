//go:build !slurmonly

package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// corral's submit, srun and salloc subcommands: urfave/cli's side of the
// implementations the Slurm names share (sbatch, srun and salloc are
// built without urfave/cli: cmd/corral-slurm).

func submitCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "submit",
		Usage:     "submit a batch script (sbatch options and #SBATCH directives)",
		UsageText: "corral submit [options] SCRIPT [ARGS...]\n   corral submit [options] --wrap \"COMMAND\"",
		// jobspec reads sbatch syntax itself: -c4, --mem=1G, and words after
		// the script belong to the script.
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *ucli.Context) error {
			s := &submitter{ctx: c.Context, prog: "corral submit", stdin: c.App.Reader, stdout: out(c),
				stderr: c.App.ErrWriter, client: func(socket string) *api.Client { return client(c, socket) },
				testOnly: printTestOnly}
			return s.submit(c.Args().Slice())
		},
	}
}

// printTestOnly prints corral submit --test-only's answer: the job as it
// would be stored and when it would start.
func printTestOnly(w, _ io.Writer, resp *api.TestSubmitResponse) error {
	now := time.Now()
	if err := writeJobDetails(w, &resp.Job, now); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, testOnlySummary(resp, now))
	return err
}

func testOnlySummary(resp *api.TestSubmitResponse, now time.Time) string {
	j := &resp.Job
	what := fmt.Sprintf("%d CPUs and %s memory per node on %d node(s) in partition %s", j.CPUs, formatSize(j.MemBytes),
		max(j.NodeCount, 1), j.Partition)
	var when string
	switch {
	case resp.Start != nil && !resp.Start.After(now.Add(time.Second)):
		when = "would start now on " + strings.Join(resp.Nodes, ",")
	case resp.Start != nil:
		when = "would start at " + formatTime(resp.Start, now.Location())
		if len(resp.Nodes) > 0 {
			when += " on " + strings.Join(resp.Nodes, ",")
		}
	default:
		when = "would wait (" + reasonText(resp.Reason) + "); no start estimate"
	}
	return fmt.Sprintf("Job %s, using %s; nothing was submitted (--test-only)", when, what)
}

// srunCommand is `corral srun`: srun reads its own command line with
// getopt semantics (options end at the command), so urfave/cli passes it
// through untouched.
func srunCommand() *ucli.Command {
	return &ucli.Command{
		Name:            "srun",
		Usage:           "run a step's tasks on the nodes of the current allocation (Slurm's srun)",
		UsageText:       "corral srun [options] CMD [ARGS...]",
		SkipFlagParsing: true,
		Action: func(c *ucli.Context) error {
			env := srunEnv{
				stdin:   os.Stdin,
				stdout:  c.App.Writer,
				stderr:  c.App.ErrWriter,
				getenv:  os.Getenv,
				environ: os.Environ,
				client:  func() *api.Client { return client(c, "") },
			}
			if code := runSrun(c.Context, env, c.Args().Slice()); code != 0 {
				return exitStatus(code)
			}
			return nil
		},
	}
}

// sallocCommand is `corral salloc`; salloc reads sbatch's options itself
// (package jobspec), so urfave/cli passes its arguments through.
func sallocCommand() *ucli.Command {
	return &ucli.Command{
		Name:            "salloc",
		Usage:           "get an allocation and run a command (default: your shell) with it (Slurm's salloc)",
		UsageText:       "corral salloc [options] [CMD [ARGS...]]",
		SkipFlagParsing: true,
		Action: func(c *ucli.Context) error {
			env := sallocEnv{stdin: os.Stdin, stdout: c.App.Writer, stderr: c.App.ErrWriter,
				client: func() *api.Client { return client(c, "") }, lookup: os.LookupEnv}
			if code := runSalloc(c.Context, env, c.Args().Slice()); code != 0 {
				return exitStatus(code)
			}
			return nil
		},
	}
}
