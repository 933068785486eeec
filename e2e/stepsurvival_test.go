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

// Issue 13, acceptance 7: kill -9 of noded while a step runs. The step's
// runner outlives noded, its task runs on undisturbed and srun keeps
// hearing it; the restarted noded reattaches the runner and the step's
// end (exit code) is recorded in ctld.
func TestNodedKill9DuringStep(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	job := c.Submit(dir, "-c", "1", "--wrap", "sleep 300")
	c.WaitState(job, api.StateRunning, 20*time.Second)
	marks := filepath.Join(dir, "step.marks")
	srun := exec.Command(filepath.Join(binDir, "corral"), "srun", "--jobid", fmt.Sprint(job), "--overlap",
		"sh", "-c", "echo begin >> "+marks+"; sleep 3; echo done >> "+marks+"; echo out; exit 7")
	srun.Env = append(os.Environ(), api.SocketEnv+"="+c.Socket)
	var out, errb bytes.Buffer
	srun.Stdout, srun.Stderr = &out, &errb
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srun.Process.Kill() })
	waitFile(t, marks, "begin", 20*time.Second)

	c.killNode(0)
	time.Sleep(500 * time.Millisecond) // the step runs with no noded at all
	c.StartNode(node)
	c.WaitNodesUp(1, 15*time.Second)

	err := srun.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 || out.String() != "out\n" {
		t.Fatalf("srun through the noded kill: %v, output %q, stderr %q; want exit 7 and the task's output", err, out.String(), errb.String())
	}
	if b, _ := os.ReadFile(marks); string(b) != "begin\ndone\n" {
		t.Fatalf("the step did not run undisturbed through the noded kill: marks %q", b)
	}
	var step api.Step
	deadline := time.Now().Add(20 * time.Second)
	for {
		var steps []api.Step
		if err := c.Client.Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", job), nil, &steps); err != nil {
			t.Fatal(err)
		}
		if len(steps) == 1 && steps[0].State.Terminal() {
			step = steps[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %d.0 not ended in ctld after the noded restart: %+v", job, steps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if step.StepID != 0 || step.State != api.StateFailed || step.ExitCode != 7 || step.End == nil {
		t.Fatalf("step recorded %+v, want 0 FAILED with exit code 7", step)
	}
	if l := c.Logs("noded-n1"); !strings.Contains(l, "step "+fmt.Sprint(job)+".0 is still running under runner") {
		t.Fatalf("noded log does not show the step's reattach:\n%s", l)
	}
}
