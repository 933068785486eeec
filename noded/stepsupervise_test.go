package noded

import (
	"testing"

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
