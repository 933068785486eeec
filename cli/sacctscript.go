package cli

import (
	"cmp"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmopt"
)

// sacctScriptOrEnv is sacct -B (--batch-script) and --env-vars: each
// named job's batch script, or the environment it was submitted with,
// under Slurm's banner, NONE for a job without one (an allocation or
// srun's). As in Slurm, the jobs must be named with -j and the two
// exclude each other. The controller keeps both in the job's spec while
// it keeps the job, and shows them to its owner and administrators only.
func sacctScriptOrEnv(s *slurmRun, r *slurmopt.Result) error {
	script, environ := r.Has("batch-script"), r.Has("env-vars")
	what := "job scripts"
	if environ {
		what = "job environment"
	}
	switch {
	case len(r.All("jobs")) == 0:
		return slurmErrorf("When requesting %s you must also request specific jobs with the '-j' option.", what)
	case script && environ:
		return slurmErrorf("Options --batch-script and --env-vars are mutually exclusive")
	}
	named, steps, err := splitSacctSteps(r.All("jobs")) // sacct.go
	if err != nil {
		return err
	}
	for _, st := range steps {
		named = append(named, st.job)
	}
	var f api.JobFilter
	if f.IDs, f.Tasks, err = slurmJobRefs(named); err != nil {
		return err
	}
	f.All = true                            // finished jobs too, while the controller keeps them
	jobs, err := listJobsView(s, f, "full") // squeue.go
	if err != nil {
		return err
	}
	slices.SortFunc(jobs, func(a, b api.Job) int { return cmp.Compare(a.ID, b.ID) })
	const rule = "--------------------------------------------------------------------------------\n"
	for i := range jobs {
		j := &jobs[i]
		var banner, text string
		if script {
			banner, text = "Batch Script for "+api.JobRefText(j)+"\n", j.Spec.Script
		} else {
			banner = "Environment used for " + api.JobRefText(j) + " (must be batch to display)\n"
			if j.Spec.Script != "" && len(j.Spec.Env) > 0 {
				text = strings.Join(j.Spec.Env, "\n") + "\n"
			}
		}
		if j.Spec.Script == "" || text == "" {
			text = "NONE\n"
		}
		s.stdout.WriteString(banner + rule + text + "\n")
	}
	return nil
}
