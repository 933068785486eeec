package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// srunAgainst starts `corral srun --jobid job --overlap args...` from the
// host, against c's controller.
func srunAgainst(t *testing.T, c *Cluster, job uint64, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	srun := exec.Command(filepath.Join(binDir, "corral"), append([]string{"srun", "--jobid", fmt.Sprint(job), "--overlap"}, args...)...)
	srun.Env = append(os.Environ(), api.SocketEnv+"="+c.Socket)
	var out, errb bytes.Buffer
	srun.Stdout, srun.Stderr = &out, &errb
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srun.Process.Kill() })
	return srun, &out, &errb
}

// runningJob submits a job and waits until its script runs on its node
// (a job is RUNNING from its launch on).
func runningJob(t *testing.T, c *Cluster) uint64 {
	t.Helper()
	dir := jobDir(t)
	job := c.Submit(dir, "-c", "1", "--wrap", "echo up > up; sleep 300")
	waitFile(t, filepath.Join(dir, "up"), "up", 20*time.Second)
	return job
}

// waitGranted waits until ctld has granted step job.step: from then on
// srun has the grant, with the node addresses ctld had.
func waitGranted(t *testing.T, c *Cluster, job uint64, step int) {
	t.Helper()
	line := fmt.Sprintf("step %d.%d: ", job, step)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(c.Logs("ctld"), line); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ctld did not grant step %d.%d:\n%s", job, step, c.Logs("ctld"))
		}
	}
}

// A step granted while the node's noded is dead carries the dead noded's
// address; the noded restarts (on another port, as e2e's nodes listen on
// port 0) and registers, and srun's launch reaches the new one: the step
// runs, as steps launched around a noded restart on a busy node must.
func TestSrunLaunchWaitsForARestartedNoded(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	c.endJobsAtCleanup()
	job := runningJob(t, c)

	c.killNode(0)
	srun, out, errb := srunAgainst(t, c, job, "echo", "launched")
	waitGranted(t, c, job, 0) // granted with the dead noded's address
	c.StartNode(node)

	if err := srun.Wait(); err != nil || out.String() != "launched\n" || errb.String() != "" {
		t.Fatalf("srun of a step granted during a noded restart: %v, output %q, stderr %q; want exit 0 and the task's output alone", err, out.String(), errb.String())
	}
}

// A step whose node never comes back fails once ctld has the node DOWN:
// srun says so in one error and exits non-zero, and the step does not
// stay RUNNING. The node then returns, so that the job's container, which
// outlives its noded, is stopped rather than left behind on the host.
func TestSrunLaunchOnADeadNodeFails(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	c.endJobsAtCleanup()
	const sleep = 4317 // the job's own, to find its leftovers by
	dir := jobDir(t)
	job := c.Submit(dir, "-c", "1", "--wrap", fmt.Sprintf("echo up > up; sleep %d", sleep))
	waitFile(t, filepath.Join(dir, "up"), "up", 20*time.Second)

	c.killNode(0)
	srun, out, errb := srunAgainst(t, c, job, "echo", "launched")
	err := srun.Wait()
	var ee *exec.ExitError
	stderr := errb.String()
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || out.Len() != 0 || strings.Count(stderr, "srun: error:") != 1 ||
		!strings.Contains(stderr, fmt.Sprintf("srun: error: Task launch for StepId=%d.0 failed on node n1: ", job)) ||
		!strings.Contains(stderr, "which the controller has DOWN") {
		t.Fatalf("srun on a node whose noded is gone: %v, output %q, stderr %q; want one error saying the node is DOWN and a non-zero exit", err, out.String(), stderr)
	}
	t.Logf("srun said: %s", stderr)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var steps []api.Step
		if err := c.Client.Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", job), nil, &steps); err != nil {
			t.Fatal(err)
		}
		if len(steps) == 1 && steps[0].State.Terminal() {
			t.Logf("the step ended %s", steps[0].State)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the step of a failed launch is not ended in ctld: %+v", steps)
		}
	}
	c.StartNode(node)
	waitNoSleeps(t, sleep, 30*time.Second)
}
