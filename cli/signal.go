package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/corral-hpc/corral/api"
)

// A signal that does not end the job: scancel -s/-b/-f and corral cancel
// --signal/--batch/--full share this. Which processes get it is Slurm
// 22.05's choice (api.SignalScope).

// signalChoice is what the options asked for.
type signalChoice struct {
	signal int
	scope  api.SignalScope
	// cancel: the choice is a plain cancel (no option, or -s KILL without
	// --batch or --full, which is how Slurm cancels a job).
	cancel bool
}

// unknownSignal is the text Slurm's scancel prints for a signal it does
// not know.
type unknownSignal string

func (u unknownSignal) Error() string { return "Unknown job signal: " + string(u) }

// chooseSignal reads --signal (given when hasSignal), --batch and --full.
// --batch or --full without a signal is SIGKILL to those processes
// alone; --full wins over --batch, as in Slurm.
func chooseSignal(name string, hasSignal, batch, full bool) (signalChoice, error) {
	c := signalChoice{signal: 9, scope: api.SignalSteps}
	if hasSignal {
		n, ok := api.ParseSignalName(name)
		if !ok {
			return c, unknownSignal(name)
		}
		c.signal = n
	}
	switch {
	case full:
		c.scope = api.SignalFull
	case batch:
		c.scope = api.SignalBatch
	default:
		c.cancel = c.signal == 9
	}
	return c, nil
}

// sendSignal sends c's signal to the jobs (IDs and tasks) and to each
// step, handing every refusal to fail with the job or step as named (ref
// "" for the refusals the answer only counts); it reports whether every
// one was signalled. An error is the request's.
func sendSignal(ctx context.Context, cl *api.Client, c signalChoice, ids []uint64, tasks []api.TaskRef, steps []stepTarget,
	fail func(ref string, step bool, msg string)) (bool, error) {
	ok := true
	for _, st := range steps {
		step := st.step
		resp, err := cl.SignalJobs(ctx, api.SignalJobsRequest{JobsRequest: api.JobsRequest{IDs: []uint64{st.job}}, Signal: c.signal, Step: &step})
		if err != nil {
			return false, err
		}
		for _, msg := range resp.Errors {
			fail(st.String(), true, msg)
			ok = false
		}
	}
	if len(ids)+len(tasks) == 0 {
		return ok, nil
	}
	resp, err := cl.SignalJobs(ctx, api.SignalJobsRequest{JobsRequest: api.JobsRequest{IDs: ids, Tasks: tasks}, Signal: c.signal, Scope: c.scope})
	if err != nil {
		return false, err
	}
	refs := make([]string, 0, len(resp.Errors))
	for ref := range resp.Errors {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		fail(ref, false, resp.Errors[ref])
	}
	if unlisted := resp.ErrorCount - len(resp.Errors); unlisted > 0 {
		fail("", false, fmt.Sprintf("%d more jobs were not signalled", unlisted))
	}
	return ok && resp.ErrorCount == 0, nil
}
