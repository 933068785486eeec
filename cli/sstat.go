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
	"github.com/corral-hpc/corral/slurmopt"
)

const sstatUsage = `Usage: sstat [OPTIONS] -j JOB[.STEP][,...]
  -a, --allsteps        every running step of a job named without a step
  -e, --helpformat      list the fields -o takes
  -j, --jobs=list       the jobs or steps (12, 12.0); without a step, the
                        job's lowest-numbered running srun step
  -n, --noheader        no header lines
  -o, --format=list     fields to print (Field%WIDTH for a width)
  -p, --parsable        '|' after every field
  -P, --parsable2       '|' between fields
  -V, --version         version
  -h, --help            this help
Accepted and ignored: --noconvert, -v. Refused: -i/--pidformat (use -o JobID,Nodelist,Pids).
See docs/slurm.md.
`

func sstatCommand() *slurmCommand {
	return &slurmCommand{
		usage: sstatUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'a', Long: "allsteps"},
			slurmopt.Option{Short: 'e', Long: "helpformat"},
			slurmopt.Option{Short: 'h', Long: "help"},
			slurmopt.Option{Short: 'i', Long: "pidformat"},
			slurmopt.Option{Short: 'j', Long: "jobs", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'n', Long: "noheader"},
			slurmopt.Option{Long: "noconvert"},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "fields", Arg: slurmopt.RequiredArg}, // sstat's other name for -o
			slurmopt.Option{Short: 'p', Long: "parsable"},
			slurmopt.Option{Short: 'P', Long: "parsable2"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
		),
		run: sstat,
	}
}

// sstatRef is one -j item: a job, with a step (srun's number, or batch
// and extern, which corral does not measure live) or without.
type sstatRef struct {
	job  uint64
	step *int
}

func sstat(s *slurmRun, r *slurmopt.Result) error {
	if r.Has("helpformat") {
		return printFieldNames(s, slurmfmt.SstatFieldNames())
	}
	if r.Has("pidformat") {
		return errors.New("-i/--pidformat is not supported by corral: ask for -o JobID,Nodelist,Pids")
	}
	list := slurmfmt.SstatDefault
	if r.Has("format") || r.Has("fields") {
		list = strings.Join(append(r.All("format"), r.All("fields")...), ",")
	}
	layout, err := slurmfmt.ParseSstatFormat(list)
	if err != nil {
		return err
	}
	words := r.All("jobs")
	if len(r.Args) > 0 { // sstat takes one list after the options too
		words = append(words, r.Args[0])
	}
	refs, err := parseSstatRefs(words)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return slurmError("You didn't give me any jobs to stat.")
	}
	var rows []*api.StepStats
	failed := false
	for _, ref := range refs {
		got, err := sstatOf(s, ref, r.Has("allsteps"))
		if err != nil {
			fmt.Fprintf(s.stderr, "%s: error: %s\n", s.prog, err)
			failed = true
			continue
		}
		rows = append(rows, got...)
	}
	if err := slurmfmt.WriteSstat(s.stdout, layout, rows, accountingStyle(r)); err != nil {
		return err
	}
	if failed {
		return exitStatus(1)
	}
	return nil
}

// parseSstatRefs reads -j lists: JOB or JOB.STEP, comma-separated.
func parseSstatRefs(words []string) ([]sstatRef, error) {
	var out []sstatRef
	for _, w := range splitJobWords(words) {
		job, step, hasStep := strings.Cut(w, ".")
		id, err := strconv.ParseUint(job, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("invalid job id %s: sstat takes JOB or JOB.STEP (12, 12.0)", w)
		}
		ref := sstatRef{job: id}
		if hasStep {
			n, err := parseStepName(step)
			if err != nil {
				return nil, fmt.Errorf("invalid job step %s: give JOB.STEP, as 12.0", w)
			}
			ref.step = &n
		}
		out = append(out, ref)
	}
	return out, nil
}

// sstatOf is the figures ref names, with Slurm's messages when its
// job or step is not running.
func sstatOf(s *slurmRun, ref sstatRef, all bool) ([]*api.StepStats, error) {
	ctx, cancel := s.requestContext()
	defer cancel()
	steps, err := s.client().Steps(ctx, ref.job)
	if se, ok := errors.AsType[*api.StatusError](err); ok && se.Code == http.StatusNotFound {
		return nil, fmt.Errorf("couldn't get steps for job %d", ref.job)
	}
	if err != nil {
		return nil, err
	}
	running := slices.DeleteFunc(steps, func(st api.Step) bool { return st.State != api.StateRunning })
	var ids []int
	for _, st := range running {
		switch {
		case ref.step != nil && st.StepID == *ref.step, ref.step == nil && all:
			ids = append(ids, st.StepID)
		}
	}
	if ref.step == nil && !all && len(running) > 0 {
		ids = []int{slices.MinFunc(running, func(a, b api.Step) int { return a.StepID - b.StepID }).StepID}
	}
	if ref.step != nil && *ref.step < 0 {
		return nil, fmt.Errorf("StepId=%d.%s: corral measures srun's steps live; the batch and extern steps' figures are in sacct once the job ends", ref.job, api.StepName(*ref.step))
	}
	if len(ids) == 0 {
		if ref.step != nil {
			return nil, slurmError(fmt.Sprintf("StepId=%d.%s not found running.", ref.job, api.StepName(*ref.step)))
		}
		return nil, slurmError(fmt.Sprintf("No steps running for job %d", ref.job))
	}
	var out []*api.StepStats
	for _, id := range ids {
		st, err := s.client().StepStats(ctx, ref.job, id)
		if se, ok := errors.AsType[*api.StatusError](err); ok && se.Code == http.StatusNotFound {
			continue // ended in the meantime, as sstat skips a step gone
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
