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
	cancel := make(chan struct{})
	started := make(chan struct{})
	done := make(chan *shim.Result, 1)
	go func() {
		done <- shim.Run(tj.dir, shim.Controls{Cancel: cancel, Started: func(time.Time) { close(started) }})
	}()
	select {
	case <-started:
	case r := <-done:
		t.Fatalf("extern ended before it held: %+v", r)
	}
	var r *shim.Result
	end = func() *shim.Result {
		if r == nil {
			close(cancel)
			r = <-done
			tj.mustBeClean(t)
		}
		return r
	}
	t.Cleanup(func() { end() })
	return tj, end
}

// TestExternHoldsUntilCancelled: an extern node's container runs nothing
// but holds until the job is stopped (steps exec into it), writes no
// output file (the batch node writes the job's), and ends CANCELLED when
// cancelled, leaving nothing behind.
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
	if r := end(); r.State != api.StateCancelled || r.Message != "" {
		t.Errorf("extern ended %+v, want CANCELLED without a message", r)
	}
}
