package shim_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestStepQueuedBeforeContainerRuns: a runner up before its job's
// container (srun outside an allocation) queues its tasks on the shim's
// spawn socket, so they run as soon as corral-init does, without waiting
// for the started file: here the shim writes that file only once srun
// has heard the whole step. A container that never runs fails the
// queued step with the reason, and nothing of it is left running.
func TestStepQueuedBeforeContainerRuns(t *testing.T) {
	t.Run("runs before the started file", func(t *testing.T) {
		tj := mustJob(t, "exec sleep 1000\n", nil)
		srun, cmd := waitingRunner(t, tj, []int{0, 1}, "/bin/sh", "-c", "echo queued $SLURM_PROCID")
		hold := make(chan struct{})
		defer shim.HoldStarted(hold)()
		defer func() {
			select {
			case <-hold:
			default:
				close(hold)
			}
		}()
		_, end := tj.start(t)
		defer end()
		got := srun.collect(t, nil)
		if _, err := os.Stat(filepath.Join(tj.dir, shim.StartedFile)); err == nil {
			t.Error("the started file was written while the test held it back")
		}
		close(hold)
		cmd.Wait()
		// The started file the runner could not wait for names corral-init
		// and the cgroups as libcontainer's state does.
		if !containertest.Eventually(10*time.Second, func() bool { pid, _ := shim.ReadStarted(tj.dir); return pid > 0 }) {
			t.Fatal("no started file with corral-init's PID")
		}
		pid, cgroups := shim.ReadStarted(tj.dir)
		ctr, err := container.Open(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := container.CgroupDirs(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID))
		if initPid, _ := ctr.InitPid(); pid != initPid || len(cgroups) == 0 || !maps.Equal(cgroups, want) {
			t.Errorf("started file: corral-init %d, cgroups %v; want %d and %v", pid, cgroups, initPid, want)
		}
		for rank, want := range []string{"queued 0\n", "queued 1\n"} {
			if g := got[uint32(rank)]; g == nil || g.out != want || g.exit == nil || g.exit.Code != 0 {
				t.Errorf("task %d: srun heard %+v, want %q and exit 0", rank, g, want)
			}
		}
		if res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0)); err != nil || res.ExitCode != 0 || res.Message != "" {
			t.Errorf("step result %+v (%v), want exit 0", res, err)
		}
	})
	t.Run("container never runs", func(t *testing.T) {
		// An allocation's part whose corral-init is missing: its container
		// fails to start, after the shim published the spawn socket.
		tj := mustJob(t, "", func(j *shim.Job) {
			j.Launch.Role, j.InitPath = api.RoleExtern, filepath.Join(t.TempDir(), "gone")
		})
		srun, cmd := waitingRunner(t, tj, []int{0}, "/bin/true")
		r := shim.Run(tj.dir, shim.Controls{})
		tj.mustBeClean(t)
		if _, err := os.Stat(filepath.Join(tj.dir, shim.SpawnFile)); err != nil {
			t.Errorf("the shim never published its spawn socket: %v", err)
		}
		if r.Message == "" {
			t.Fatalf("the job without corral-init ran: %+v", r)
		}
		if err := shim.WriteResult(tj.dir, r); err != nil { // as Main does
			t.Fatal(err)
		}
		got := srun.collect(t, nil)
		cmd.Wait()
		if g := got[0]; g == nil || g.err == "" || !strings.Contains(g.err, "corral: ") || g.exit == nil || g.exit.Code != 1 {
			t.Errorf("srun heard %+v, want the reason and exit code 1", g)
		}
		res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0))
		if err != nil || res.ExitCode != 1 || !strings.Contains(res.Message, "not running") {
			t.Errorf("step result %+v (%v), want exit code 1 and that the container is not running", res, err)
		}
	})
}
