package noded

import (
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// A node reports a step's status as Slurm's slurmstepd does: the highest
// wait status among its tasks and the runner's result, so an exit code
// beats a signal however the result's "highest exit code" ranks them
// (128+signal); the runner's own code (an MPI abort's) counts too.
func TestNodeStatus(t *testing.T) {
	task := func(code, sig int) shim.TaskResult { return shim.TaskResult{ExitCode: code, Signal: sig} }
	for _, tc := range []struct {
		name      string
		res       shim.StepResult
		code, sig int
	}{
		{"every task exited 0", shim.StepResult{Tasks: []shim.TaskResult{task(0, 0), task(0, 0)}}, 0, 0},
		{"a task exited 3, the other killed by the job's end",
			shim.StepResult{ExitCode: 143, Signal: 15, Tasks: []shim.TaskResult{task(3, 0), task(143, 15)}}, 3, 0},
		{"killed by two signals", shim.StepResult{ExitCode: 143, Signal: 15, Tasks: []shim.TaskResult{task(137, 9), task(143, 15)}}, 143, 15},
		{"an MPI abort's code over the killed tasks", shim.StepResult{ExitCode: 7, Tasks: []shim.TaskResult{task(137, 9), task(137, 9)}}, 7, 0},
		{"tasks that could not start", shim.StepResult{ExitCode: 1, Message: "no container"}, 1, 0},
	} {
		if code, sig := nodeStatus(&tc.res); code != tc.code || sig != tc.sig {
			t.Errorf("%s: %d:%d, want %d:%d", tc.name, code, sig, tc.code, tc.sig)
		}
	}
}

// A node's state for its part of a step comes from its tasks' statuses,
// as Slurm 22.05's accounting (as_mysql_step_complete) derives a step's
// from the status its nodes send, whoever stopped the tasks. Checked on
// the loopback Slurm 22.05 (scripts/slurm-up.sh, DebugFlags=Steps):
// `srun bash -c 'trap "exit 0" TERM; sleep 100 & wait' &` in a script
// that exits, or whose job is cancelled (scancel JOB), gets SIGTERM and
// sends REQUEST_STEP_COMPLETE rc=0: COMPLETED; `scancel JOB.0` of the
// same step sends it SIGKILL (rc=9, "task 0: Killed"): CANCELLED.
func TestStepNodeState(t *testing.T) {
	task := func(code, sig int) shim.TaskResult { return shim.TaskResult{ExitCode: code, Signal: sig} }
	ok := shim.StepResult{Tasks: []shim.TaskResult{task(0, 0), task(0, 0)}}
	term := shim.StepResult{ExitCode: 143, Signal: 15, Tasks: []shim.TaskResult{task(0, 0), task(143, 15)}}
	noResult := shim.StepResult{ExitCode: 1, Message: "the step's runner ended without a result"}
	for _, tc := range []struct {
		name               string
		res                shim.StepResult
		cancelled, stopped bool
		want               api.JobState
	}{
		{"tasks exited 0", ok, false, false, api.StateCompleted},
		{"tasks caught the job's end's SIGTERM and exited 0", ok, false, true, api.StateCompleted},
		{"tasks killed by the job's end's SIGTERM", term, false, true, api.StateCancelled},
		{"a task killed by SIGTERM from someone else, the job still running", term, false, false, api.StateCancelled},
		{"a task segfaulted", shim.StepResult{ExitCode: 139, Signal: 11, Tasks: []shim.TaskResult{task(139, 11)}}, false, false, api.StateCancelled},
		{"a task exited 3, the other killed by the job's end",
			shim.StepResult{ExitCode: 143, Signal: 15, Tasks: []shim.TaskResult{task(3, 0), task(143, 15)}}, false, true, api.StateFailed},
		{"tasks that caught the job's end's SIGTERM and exited 143", shim.StepResult{ExitCode: 143, Tasks: []shim.TaskResult{task(143, 0)}}, false, true, api.StateFailed},
		{"cancelled by ctld, tasks exited 0", ok, true, false, api.StateCancelled},
		{"tasks that could not start", noResult, false, false, api.StateFailed},
		{"a runner killed at its job's end without a result", noResult, false, true, api.StateCancelled},
		{"a task OOM-killed", shim.StepResult{ExitCode: 137, Signal: 9, OOMKills: 1, Tasks: []shim.TaskResult{task(137, 9)}}, false, false, api.StateOutOfMemory},
		{"a task OOM-killed, then the job's end", shim.StepResult{ExitCode: 137, Signal: 9, OOMKills: 1, Tasks: []shim.TaskResult{task(137, 9)}}, false, true, api.StateOutOfMemory},
	} {
		if got := stepNodeState(&tc.res, tc.cancelled, tc.stopped); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
