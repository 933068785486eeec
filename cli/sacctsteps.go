package cli

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmfmt"
)

// sacctStep is a step sacct -j names: JOB.STEP, where JOB is a job or an
// array task (12, 12_3) and STEP is batch, extern or srun's number.
type sacctStep struct {
	job  string
	step int
}

// splitSacctSteps takes the JOB.STEP words out of sacct's -j lists:
// jobs are the jobs named by themselves.
func splitSacctSteps(lists []string) (jobs []string, steps []sacctStep, err error) {
	for _, w := range splitJobWords(lists) {
		job, name, ok := strings.Cut(w, ".")
		if !ok {
			jobs = append(jobs, w)
			continue
		}
		id, err := parseStepName(name)
		if err != nil || job == "" || strings.Contains(job, "[") {
			return nil, nil, fmt.Errorf("invalid job step %s: give JOB.STEP, as 12.batch, 12.extern or 12.0", w)
		}
		steps = append(steps, sacctStep{job: job, step: id})
	}
	return jobs, steps, nil
}

// parseStepName reads a step as it follows JOB.: batch, extern or a
// number (api.StepName's spellings).
func parseStepName(s string) (int, error) {
	switch s {
	case api.StepName(api.StepBatch):
		return api.StepBatch, nil
	case api.StepName(api.StepExtern):
		return api.StepExtern, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s[0] == '+' {
		return 0, fmt.Errorf("invalid step %q", s)
	}
	return n, nil
}

// sacctLines are the lines sacct prints for rows: each job's line and its
// steps' (none with -X). When steps are named, a job named only through
// its steps shows only those; a job named by itself (named) shows all of
// its lines.
func sacctLines(rows []slurmfmt.AcctRow, allocations bool, named []string, steps []sacctStep) []slurmfmt.AcctRow {
	if allocations {
		return rows
	}
	lines := slurmfmt.WithSteps(rows)
	if len(steps) == 0 {
		return lines
	}
	byName := func(r *slurmfmt.AcctRow) []string {
		return []string{slurmfmt.AcctJobID(&r.Rec), strconv.FormatUint(r.Rec.JobID, 10)}
	}
	whole := func(r *slurmfmt.AcctRow) bool {
		return slices.ContainsFunc(byName(r), func(n string) bool { return slices.Contains(named, n) })
	}
	return slices.DeleteFunc(lines, func(r slurmfmt.AcctRow) bool {
		if whole(&r) {
			return false
		}
		if r.Step == nil {
			return true
		}
		return !slices.ContainsFunc(steps, func(s sacctStep) bool {
			return s.step == r.Step.StepID && slices.Contains(byName(&r), s.job)
		})
	})
}

// addRunningSteps gives each running job's row its steps so far: its
// batch and extern parts, and srun's, which listings leave out, so each
// running job is asked for its own.
func addRunningSteps(s *slurmRun, rows []slurmfmt.AcctRow) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	for i := range rows {
		r := &rows[i]
		if r.Job == nil || r.Rec.State != api.StateRunning || r.Rec.Steps != nil {
			continue
		}
		steps, err := s.client().Steps(ctx, r.Rec.JobID)
		var se *api.StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			continue // gone in the meantime
		}
		if err != nil {
			return err
		}
		r.Rec.Steps = append(r.Job.PartSteps(), steps...)
	}
	return nil
}
