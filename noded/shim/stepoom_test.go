package shim

import (
	"os"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// A step's share of its job's OOM kills while it ran: all of them when a
// task did not end clean, none when every task exited 0 (the kill was
// another step's or the script's) or there was none.
func TestStepOOMKills(t *testing.T) {
	ok, killed, shell := TaskResult{}, TaskResult{ExitCode: 137, Signal: 9}, TaskResult{ExitCode: 137}
	for _, tc := range []struct {
		name          string
		before, after int64
		tasks         []TaskResult
		want          int64
	}{
		{"no kill", 2, 2, []TaskResult{killed}, 0},
		{"a task SIGKILLed by the OOM killer", 0, 1, []TaskResult{ok, killed}, 1},
		{"a shell task whose child was killed", 3, 5, []TaskResult{shell}, 2},
		{"every task exited 0: another's kill", 0, 1, []TaskResult{ok, ok}, 0},
		{"a count that went back (a new cgroup)", 4, 1, []TaskResult{killed}, 0},
	} {
		if got := stepOOMKills(tc.before, tc.after, tc.tasks); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A job's OOM kills that its steps counted as theirs do not make the job
// OUT_OF_MEMORY, as in Slurm 22.05 (loopback, task/cgroup): a --mem=100M
// batch script whose `srun python3 -c 'a = bytearray(400<<20)'` step was
// OOM-killed and which then exits 0 ends COMPLETED 0:0; one whose own
// python3 was killed ends OUT_OF_MEMORY 0:125.
func TestStepsOOMKillsAreNotTheJobs(t *testing.T) {
	job := t.TempDir()
	for id, kills := range []int64{1, 0, 2} {
		dir := StepDir(job, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := WriteStepResult(dir, &StepResult{OOMKills: kills}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(StepDir(job, 3), 0o700); err != nil { // a step still running: no result
		t.Fatal(err)
	}
	steps := stepsOOMKills(job)
	if steps != 3 {
		t.Fatalf("the steps' OOM kills: %d, want 3", steps)
	}
	if st := decide(endNatural, &Result{OOMKills: 3, StepOOMKills: steps}); st != api.StateCompleted {
		t.Errorf("a job whose OOM kills were its steps': %s, want COMPLETED", st)
	}
	if st := decide(endNatural, &Result{OOMKills: 4, StepOOMKills: steps}); st != api.StateOutOfMemory {
		t.Errorf("a job with an OOM kill of its own: %s, want OUT_OF_MEMORY", st)
	}
}
