package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// submit --wait and --test-only.

// waitPoll is how long one long poll asks the controller to hold; the
// controller answers sooner when the job ends.
const waitPoll = 30 * time.Second

// unreachableGrace is how long --wait keeps asking a controller that went
// away (a restart) before giving up.
const unreachableGrace = time.Minute

// waitForEnd blocks until job id (every task of an array job) has ended
// and makes the command exit with the job's exit status, as sbatch --wait
// does: its exit code, 1 when it ended without one (signal, cancel, lost
// node); for an array the highest of its tasks'.
func waitForEnd(c *ucli.Context, cl *api.Client, id uint64) error {
	ref := strconv.FormatUint(id, 10)
	var lostSince time.Time
	for {
		ctx, cancel := context.WithTimeout(c.Context, waitPoll+requestTimeout)
		resp, err := cl.Wait(ctx, ref, waitPoll)
		cancel()
		switch {
		case errors.Is(err, api.ErrUnreachable) && c.Context.Err() == nil:
			if lostSince.IsZero() {
				lostSince = time.Now()
			}
			if time.Since(lostSince) > unreachableGrace {
				return fmt.Errorf("waiting for job %d: %w", id, err)
			}
			time.Sleep(time.Second)
			continue
		case err != nil:
			return fmt.Errorf("waiting for job %d: %w", id, err)
		}
		lostSince = time.Time{}
		if !resp.Done {
			continue
		}
		if resp.ExitStatus == 0 {
			return nil
		}
		fmt.Fprintf(c.App.ErrWriter, "corral submit: job %d ended %s (exit status %d)\n", id, resp.State, resp.ExitStatus)
		return exitStatus(resp.ExitStatus)
	}
}

// testOnly asks the controller to check the job against the cluster and
// plan it, and prints the job as it would be stored and when it would
// start. Nothing is submitted.
func testOnly(c *ucli.Context, cl *api.Client, sub api.SubmitRequest) error {
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := cl.TestSubmit(ctx, sub)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := writeJobDetails(out(c), &resp.Job, now); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out(c), testOnlySummary(resp, now))
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
