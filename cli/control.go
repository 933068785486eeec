//go:build !slurmonly

package cli

import (
	"fmt"
	"sort"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// hold, release, requeue and update: scontrol's job verbs as commands.

func holdCommand() *ucli.Command {
	return controlCommand("hold", "keep pending jobs from starting until released (root's hold: only root releases)")
}

func releaseCommand() *ucli.Command {
	return controlCommand("release", "let held jobs start")
}

func requeueCommand() *ucli.Command {
	return controlCommand("requeue", "put running or finished jobs back to pending (the run stays in corral acct)")
}

func controlCommand(action, usage string) *ucli.Command {
	return &ucli.Command{
		Name:      action,
		Usage:     usage + " (like scontrol " + action + ")",
		UsageText: "corral " + action + " ID... (123 is a job or every task of array job 123; 123_4 is one task)",
		Flags:     []ucli.Flag{socketFlag()},
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("give the job IDs to %s", action)
			}
			ids, tasks, err := parseJobRefs(c.Args().Slice())
			if err != nil {
				return err
			}
			ctx, cancel := requestContext(c)
			defer cancel()
			resp, err := client(c, "").Control(ctx, action, api.JobsRequest{IDs: ids, Tasks: tasks})
			if err != nil {
				return err
			}
			return printJobErrors(c, action, resp.Errors, resp.ErrorCount)
		},
	}
}

// printJobErrors prints one line per job the controller refused, in ID
// order, and makes the command exit 1 if there was any. The controller
// lists the first refusals of each request and counts them all (total).
func printJobErrors(c *ucli.Context, cmd string, errs map[string]string, total int) error {
	if len(errs) == 0 {
		return nil
	}
	defer printUnlisted(c, cmd, len(errs), total)
	refs := make([]string, 0, len(errs))
	for ref := range errs {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(a, b int) bool { return refLess(refs[a], refs[b]) })
	for _, ref := range refs {
		fmt.Fprintf(c.App.ErrWriter, "corral %s: %s\n", cmd, oneLine(errs[ref]))
	}
	return exitStatus(1)
}

func updateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "update",
		Usage: "change a job's TimeLimit, Nice or Name (like scontrol update)",
		UsageText: "corral update ID KEY=VALUE...   (or JobId=ID KEY=VALUE...)\n" +
			"   keys: TimeLimit=TIME (users may only lower it), Nice=N (negative: root only), Name=NAME",
		Flags:  []ucli.Flag{socketFlag()},
		Action: update,
	}
}

func update(c *ucli.Context) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return usageErrorf("give a job ID and at least one KEY=VALUE (%s)", jobUpdateKeys)
	}
	req, err := parseUpdate(args)
	if err != nil {
		return usageError{err}
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := updateJobs(ctx, client(c, ""), req)
	if err != nil {
		return err
	}
	return printJobErrors(c, "update", resp.Errors, resp.ErrorCount)
}

// printUnlisted says how many refusals the controller counted but did
// not list (api.MaxListedErrors per request).
func printUnlisted(c *ucli.Context, cmd string, listed, total int) {
	if total > listed {
		fmt.Fprintf(c.App.ErrWriter, "corral %s: %d more jobs refused (not listed)\n", cmd, total-listed)
	}
}
