package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
)

// waitJobLimit is how long scontrol wait_job waits for a pending job to
// start: Slurm's (SuspendTimeout + ResumeTimeout) x 5 with their
// defaults, 30 s and 60 s.
var waitJobLimit = 450 * time.Second

// waitJobPoll is how often wait_job looks again (Slurm's POLL_SLEEP).
var waitJobPoll = 3 * time.Second

// scontrolWaitJob is `scontrol wait_job ID`: exit 0 once the job runs
// (corral's nodes are ready when a job starts: none boots), 1 with
// Slurm's words if it has ended or is held, or has not started in time.
func scontrolWaitJob(s *slurmRun, args []string) error {
	switch {
	case len(args) < 1:
		fmt.Fprintf(s.stderr, "too few arguments for keyword:wait_job\n")
		return exitStatus(1)
	case len(args) > 1:
		fmt.Fprintf(s.stderr, "too many arguments for keyword:wait_job\n")
		return exitStatus(1)
	}
	id, err := strconv.ParseUint(leadingDigits(args[0]), 10, 64) // Slurm reads it with atoi
	if err != nil || id == 0 {
		fmt.Fprintf(s.stderr, "Invalid job_id %s", args[0]) // sic: no newline, as Slurm
		return exitStatus(1)
	}
	deadline := time.Now().Add(waitJobLimit)
	for {
		ctx, cancel := s.requestContext()
		j, err := s.client().Job(ctx, id)
		cancel()
		var se *api.StatusError
		switch {
		case errors.As(err, &se) && se.Code == http.StatusNotFound:
			return s.waitJobSays("Problem running job %d", id)
		case err != nil:
			return err
		case j.State.Holds():
			fmt.Fprintf(s.stderr, "%s: Nodes are ready for job %d\n", s.prog, id)
			return nil
		case j.State.Terminal(), j.Reason == api.ReasonJobHeld || j.Reason == api.ReasonJobHeldAdmin:
			return s.waitJobSays("Job %d no longer running", id)
		case time.Now().After(deadline):
			return s.waitJobSays("Problem running job %d", id)
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-time.After(waitJobPoll):
		}
	}
}

func (s *slurmRun) waitJobSays(format string, id uint64) error {
	fmt.Fprintf(s.stderr, "%s: "+format+"\n", s.prog, id)
	return exitStatus(1)
}
