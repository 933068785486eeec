package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

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
func (s *submitter) waitForEnd(cl *api.Client, id uint64) error {
	ref := strconv.FormatUint(id, 10)
	var lostSince time.Time
	for {
		ctx, cancel := context.WithTimeout(s.ctx, waitPoll+requestTimeout)
		resp, err := cl.Wait(ctx, ref, waitPoll)
		cancel()
		switch {
		case errors.Is(err, api.ErrUnreachable) && s.ctx.Err() == nil:
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
		if !s.sbatch { // Slurm's sbatch --wait says nothing: its exit status tells
			fmt.Fprintf(s.stderr, "%s: job %d ended %s (exit status %d)\n", s.prog, id, resp.State, resp.ExitStatus)
		}
		return exitStatus(resp.ExitStatus)
	}
}

// testOnlySubmit asks the controller to check the job against the
// cluster and plan it, and prints the answer. Nothing is submitted.
func (s *submitter) testOnlySubmit(ctx context.Context, cl *api.Client, sub api.SubmitRequest) error {
	resp, err := cl.TestSubmit(ctx, sub)
	if err != nil {
		return err
	}
	return s.testOnly(s.stdout, s.stderr, resp)
}
