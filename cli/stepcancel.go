package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// stepTarget is JOB.STEP: a numbered step of a job (srun's), as scancel and
// corral cancel take it.
type stepTarget struct {
	job  uint64
	step int
}

func (r stepTarget) String() string { return fmt.Sprintf("%d.%d", r.job, r.step) }

// splitStepRefs takes the JOB.STEP words out of words.
func splitStepRefs(words []string) (rest []string, steps []stepTarget, err error) {
	for _, w := range words {
		job, step, ok := strings.Cut(w, ".")
		if !ok {
			rest = append(rest, w)
			continue
		}
		id, jerr := strconv.ParseUint(job, 10, 64)
		n, serr := strconv.Atoi(step)
		if jerr != nil || id == 0 || serr != nil || n < 0 {
			return nil, nil, fmt.Errorf("invalid job step %s: give JOB.STEP with a step number, as 12.0", w)
		}
		steps = append(steps, stepTarget{job: id, step: n})
	}
	return rest, steps, nil
}

// cancelSteps cancels each step; it hands every failure to fail and
// reports whether all were cancelled.
func cancelSteps(ctx context.Context, cl *api.Client, steps []stepTarget, fail func(stepTarget, error)) bool {
	ok := true
	for _, r := range steps {
		if _, err := cl.CancelStep(ctx, r.job, r.step); err != nil {
			fail(r, err)
			ok = false
		}
	}
	return ok
}
