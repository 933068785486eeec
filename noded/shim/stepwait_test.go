package shim_test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestStepWaitsForContainer: noded starts a step's runner as soon as the
// launch arrives, before the job's container runs (srun outside an
// allocation). The runner connects to srun, waits, and runs its task
// once the container is up; a job that ends before its container ran,
// or a cancel during the wait, fails the step with the reason.
func TestStepWaitsForContainer(t *testing.T) {
	t.Run("starts", func(t *testing.T) {
		tj := mustJob(t, "exec sleep 1000\n", nil)
		srun, cmd := waitingRunner(t, tj, []int{0}, "/bin/sh", "-c", "echo in-container")
		started, end := tj.start(t)
		defer end()
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatalf("the job never started:\n%s", tj.output(t))
		}
		got := srun.collect(t, nil)
		cmd.Wait()
		if g := got[0]; g == nil || g.out != "in-container\n" || g.exit == nil || g.exit.Code != 0 {
			t.Errorf("srun heard %+v, want the task's line and exit 0", g)
		}
	})
	for _, tc := range []struct {
		name, want string
		stop       func(t *testing.T, tj *testJob, runner int)
	}{
		{"job ends first", "ended before its container started", func(t *testing.T, tj *testJob, _ int) {
			if err := shim.WriteResult(tj.dir, &shim.Result{State: api.StateCancelled, End: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}},
		{"cancelled", "cancelled before the tasks started", func(t *testing.T, _ *testJob, runner int) {
			if err := syscall.Kill(runner, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tj := mustJob(t, "true\n", nil) // never started
			srun, cmd := waitingRunner(t, tj, []int{0, 1}, "/bin/true")
			tc.stop(t, tj, cmd.Process.Pid)
			got := srun.collect(t, nil)
			cmd.Wait()
			for _, rank := range []uint32{0, 1} {
				if g := got[rank]; g == nil || !strings.Contains(g.err, tc.want) || g.exit == nil || g.exit.Code != 1 {
					t.Errorf("task %d: srun heard %+v, want %q and exit code 1", rank, g, tc.want)
				}
			}
			res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0))
			if err != nil || res.ExitCode != 1 || !strings.Contains(res.Message, tc.want) {
				t.Errorf("result %+v (%v), want exit code 1 and %q", res, err, tc.want)
			}
		})
	}
}

// waitingRunner starts step 0's runner for ranks of tj's job (not
// started yet) and returns once it has connected to its srun: it waits
// for the container then.
func waitingRunner(t *testing.T, tj *testJob, ranks []int, argv ...string) (*fakeSrun, *exec.Cmd) {
	t.Helper()
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, ranks, argv, srun.ln.Addr().String())
	cmd, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	return srun, cmd
}
