//go:build !slurmonly

package cli

import (
	"fmt"
	"sort"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

func cancelCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "cancel",
		Usage: "cancel jobs by ID and/or filter (like scancel)",
		UsageText: "corral cancel [-u USER] [--me] [-t STATES] [-n NAME] [ID...]   (123: a job or a whole array; 123_4: one task; 123.0: one step)\n" +
			"   corral cancel --signal SIG [--batch | --full] ID...   (signal running jobs and keep them running, as scancel -s)",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "only jobs of USER"},
			&ucli.BoolFlag{Name: "me", Usage: "only my jobs"},
			&ucli.StringSliceFlag{Name: "states", Aliases: []string{"t", "state"}, Usage: "only jobs in these states (comma list)"},
			&ucli.StringFlag{Name: "name", Aliases: []string{"n", "jobname"}, Usage: "only jobs named NAME"},
			&ucli.StringFlag{Name: "signal", Aliases: []string{"s"}, Usage: "send SIG (USR1, SIGUSR1, 10) to the jobs' steps and keep them running; KILL cancels"},
			&ucli.BoolFlag{Name: "batch", Aliases: []string{"b"}, Usage: "signal the batch script's shell alone"},
			&ucli.BoolFlag{Name: "full", Aliases: []string{"f"}, Usage: "signal the batch script and everything it started"},
			socketFlag(),
		},
		Action: cancelJobs,
	}
}

func cancelJobs(c *ucli.Context) error {
	words, steps, err := splitStepRefs(c.Args().Slice())
	if err != nil {
		return usageError{err}
	}
	ids, tasks, err := parseJobRefs(words)
	if err != nil {
		return err
	}
	req := api.CancelRequest{IDs: ids, Tasks: tasks, User: c.String("user"), Name: c.String("name")}
	if c.Bool("me") {
		if req.User != "" {
			return usageErrorf("give --me or --user, not both")
		}
		if req.User, err = currentUser(); err != nil {
			return err
		}
	}
	for _, s := range commaList(c.StringSlice("states")) {
		st, err := api.ParseJobState(s)
		if err != nil {
			return usageError{err}
		}
		req.States = append(req.States, st)
	}
	req.States = dedupeStates(req.States)
	jobsNamed := len(req.IDs)+len(req.Tasks) > 0 || req.User != "" || req.Name != "" || len(req.States) > 0
	choice, err := chooseSignal(c.String("signal"), c.IsSet("signal"), c.Bool("batch"), c.Bool("full"))
	if err != nil {
		return usageErrorf("%v: give a name such as USR1 or SIGUSR1, or a number from 1 to %d", err, api.MaxSignal)
	}
	if !choice.cancel {
		return signalJobs(c, choice, req, steps)
	}
	if !jobsNamed && len(steps) == 0 {
		return usageErrorf("give job IDs, JOB.STEP or a filter (--user, --me, --states, --name)")
	}
	if c.IsSet("user") && req.User == "" || c.IsSet("name") && req.Name == "" {
		return usageErrorf("--user and --name must not be empty")
	}

	ctx, cancel := requestContext(c)
	defer cancel()
	stepsOK := cancelSteps(ctx, client(c, ""), steps, func(r stepTarget, err error) {
		fmt.Fprintf(c.App.ErrWriter, "corral cancel: step %s: %s\n", r, oneLine(err.Error()))
	})
	if !jobsNamed {
		if !stepsOK {
			return exitStatus(1)
		}
		return nil
	}
	resp, err := client(c, "").Cancel(ctx, req)
	if err != nil {
		return err
	}
	if len(resp.Errors) == 0 {
		if !stepsOK {
			return exitStatus(1)
		}
		return nil
	}
	failed := make([]uint64, 0, len(resp.Errors))
	for id := range resp.Errors {
		failed = append(failed, id)
	}
	sort.Slice(failed, func(a, b int) bool { return failed[a] < failed[b] })
	for _, id := range failed {
		fmt.Fprintf(c.App.ErrWriter, "corral cancel: %s\n", oneLine(resp.Errors[id]))
	}
	printUnlisted(c, "cancel", len(resp.Errors), resp.ErrorCount) // control.go
	return exitStatus(1)
}

// signalJobs is cancel --signal, --batch or --full: the named jobs and
// steps get the signal and keep running.
func signalJobs(c *ucli.Context, choice signalChoice, req api.CancelRequest, steps []stepTarget) error {
	if req.User != "" || req.Name != "" || len(req.States) > 0 {
		return usageErrorf("--signal, --batch and --full take job IDs and JOB.STEP, not filters")
	}
	if len(req.IDs)+len(req.Tasks)+len(steps) == 0 {
		return usageErrorf("give the job IDs or JOB.STEP to signal")
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	ok, err := sendSignal(ctx, client(c, ""), choice, req.IDs, req.Tasks, steps, func(ref string, _ bool, msg string) {
		if ref != "" {
			msg = ref + ": " + msg
		}
		fmt.Fprintf(c.App.ErrWriter, "corral cancel: %s\n", oneLine(msg))
	})
	if err != nil {
		return err
	}
	if !ok {
		return exitStatus(1)
	}
	return nil
}
