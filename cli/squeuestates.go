package cli

import (
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// squeue's -t takes every job state code and name Slurm 22.05 lists
// (squeue(1), JOB STATE CODES). Two are flags on a job in another state:
// COMPLETING (CG), a job whose parts are still stopping
// (api.Job.Completing), and CONFIGURING (CF), a running job whose node is
// still preparing it. The states no corral job is ever in are accepted
// and match nothing, so a script that names them runs unchanged.
var slurmOnlyStates = []string{
	"BF", "BOOT_FAIL", "DL", "DEADLINE", "PR", "PREEMPTED", "RD", "RESV_DEL_HOLD",
	"RF", "REQUEUE_FED", "RH", "REQUEUE_HOLD", "RQ", "REQUEUED", "RS", "RESIZING",
	"RV", "REVOKED", "SE", "SPECIAL_EXIT", "SI", "SIGNALING", "SO", "STAGE_OUT",
	"ST", "STOPPED",
}

// squeueStateList is how Slurm 22.05's squeue lists the states it takes
// after a bad one.
const squeueStateList = "pending,running,suspended,completed,cancelled,failed,timeout,node_fail,preempted," +
	"boot_fail,deadline,out_of_memory,completing,configuring,resizing,resv_del_hold,requeued,requeue_fed," +
	"requeue_hold,revoked,signaling,special_exit,stage_out,stopped"

// stateSelection is what squeue -t asks for.
type stateSelection struct {
	named       bool // -t named states (not only all)
	all         bool
	states      []api.JobState
	completing  bool
	configuring bool
}

// parseSqueueStates reads -t's words (in any case); an unknown one is
// returned as bad.
func parseSqueueStates(words []string) (sel stateSelection, bad string) {
	for _, w := range words {
		switch u := strings.ToUpper(w); {
		case u == "ALL":
			sel.all = true
			continue
		case u == "CG" || u == "COMPLETING":
			sel.completing = true
		case u == "CF" || u == "CONFIGURING":
			sel.configuring = true
		case slices.Contains(slurmOnlyStates, u):
		default:
			st, err := api.ParseJobState(w)
			if err != nil {
				return sel, w
			}
			sel.states = append(sel.states, st)
		}
		sel.named = true
	}
	return sel, ""
}

// apply puts the listing's part of the selection into f: the states a
// job of the selection can be in, and the completing ones.
func (sel stateSelection) apply(f *api.JobFilter) {
	f.All = sel.all || slices.ContainsFunc(sel.states, api.JobState.Terminal)
	if sel.all || !sel.named {
		return
	}
	f.States = dedupeStates(slices.Clone(sel.states))
	if sel.configuring && !slices.Contains(f.States, api.StateRunning) { // a configuring job is RUNNING
		f.States = append(f.States, api.StateRunning)
	}
	f.Completing = sel.completing
}

// matches reports whether job j is of the selection: in one of its
// states (as Slurm matches a job's base state), or completing or
// configuring when those are asked for.
func (sel stateSelection) matches(j *api.Job) bool {
	if sel.all || !sel.named {
		return true
	}
	return slices.Contains(sel.states, j.State) || sel.completing && j.Completing ||
		sel.configuring && j.State == api.StateRunning && j.Reason == api.ReasonImagePull
}
