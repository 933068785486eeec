package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// startExtern starts a job in the extern role (a node of the allocation
// that runs no script) and returns once its container holds; end cancels
// it and returns its result, after checking it left nothing behind.
func startExtern(t *testing.T, edit func(*shim.Job)) (tj *testJob, end func() *shim.Result) {
	t.Helper()
	tj = mustJob(t, "", func(j *shim.Job) {
		j.Launch.Role = api.RoleExtern
		if edit != nil {
			edit(j)
		}
	})
	started, end := tj.start(t)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		end()
		t.Fatal("the extern container never held")
	}
	return tj, end
}

// TestExternHoldsUntilCancelled: an extern node's container runs nothing
// but holds until the job is stopped (steps exec into it), writes no
// output file (the batch node writes the job's), takes a step, and ends
// CANCELLED when cancelled, leaving nothing behind (the step's orphan
// included).
func TestExternHoldsUntilCancelled(t *testing.T) {
	tj, end := startExtern(t, nil)
	if _, err := container.Open(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID)); err != nil {
		t.Errorf("the extern container is not running: %v", err)
	}
	out := filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID))
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an extern node created the job's output file %s (%v)", out, err)
	}
	if _, err := os.Stat(filepath.Join(tj.dir, shim.ScriptFile)); !os.IsNotExist(err) {
		t.Errorf("an extern node wrote a script (%v)", err)
	}
	// A step runs in it; its task outlives the step (a background
	// process, orphaned to corral-init) until the job ends.
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, []int{0}, []string{"/bin/sh", "-c", `tr '\0' ' ' < /proc/1/cmdline; echo; sleep 1000 >/dev/null 2>&1 &`}, srun.ln.Addr().String())
	cmd, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	got := srun.collect(t, nil)
	cmd.Wait()
	if g := got[0]; g == nil || g.out != "/.corral/init --stdio-fds --spawn-fds --hold \n" || g.exit == nil || g.exit.Code != 0 {
		t.Errorf("step in the extern container: %+v, want corral-init --hold as its PID 1", g)
	}
	if r := end(); r.State != api.StateCancelled || r.Message != "" {
		t.Errorf("extern ended %+v, want CANCELLED without a message", r)
	}
}

// TestSignalReachesSteps: --signal without B: reaches a step's task
// (corral-init's child, known by the step's tasks file), here on an
// extern node, which has no script at all.
func TestSignalReachesSteps(t *testing.T) {
	tj, end := startExtern(t, func(j *shim.Job) {
		j.Launch.TimeLimit = 10
		j.Launch.Signal = &api.JobSignal{Signal: 10, Before: 8} // SIGUSR1 two seconds in
	})
	defer end()
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, []int{0}, []string{"/bin/sh", "-c", `trap 'echo got USR1; exit 0' USR1; while :; do sleep 0.1; done`}, srun.ln.Addr().String())
	cmd, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	got := srun.collect(t, nil)
	cmd.Wait()
	if g := got[0]; g == nil || g.out != "got USR1\n" || g.exit == nil || g.exit.Code != 0 {
		t.Errorf("step task: %+v, want its USR1 trap to run", g)
	}
}
