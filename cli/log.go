//go:build !slurmonly

package cli

import (
	"context"
	"time"

	ucli "github.com/urfave/cli/v2"
)

// logPoll is how often `corral log -f` asks for more output.
const logPoll = 500 * time.Millisecond

func logCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "log",
		Usage:     "print a job's output from the node that runs (or ran) it; -f follows it",
		UsageText: "corral log JOBID [-f] [--err]",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new output until the job ends"},
			&ucli.BoolFlag{Name: "err", Usage: "the job's stderr instead of its stdout"},
			socketFlag(),
		},
		Action: showLog,
	}
}

func showLog(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("expected one JOBID (corral log JOBID [-f] [--err])")
	}
	ids, err := parseJobIDs(c.Args().Slice())
	if err != nil {
		return err
	}
	cl := client(c, "")
	var offset int64
	for {
		ctx, cancel := requestContext(c)
		chunk, err := cl.Log(ctx, ids[0], c.Bool("err"), offset)
		cancel()
		if err != nil {
			return err
		}
		if _, err := out(c).Write(chunk.Data); err != nil {
			return err
		}
		more := chunk.Next < chunk.Size
		offset = chunk.Next
		switch {
		case more:
			continue
		case !c.Bool("follow") || chunk.Done:
			return nil
		}
		select {
		case <-c.Context.Done():
			return context.Cause(c.Context)
		case <-time.After(logPoll):
		}
	}
}
