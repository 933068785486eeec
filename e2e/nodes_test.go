package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// An administrator drains the only node with the real binaries: a job
// submitted meanwhile waits, `corral nodes` says why, and after a resume
// the job runs to its end.
func TestDrainAndResumeNode(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	if r := c.Corral("nodes", "drain", "n1", "--reason", "new disks"); r.Code != 0 || r.Stdout != "drained n1\n" {
		t.Fatalf("drain: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	id := c.Submit(dir, "-c", "1", "--wrap", "true")
	time.Sleep(time.Second) // several heartbeats and cycles
	if j := c.Job(id); j.State != api.StatePending {
		t.Fatalf("job %d is %s on a drained node", id, j.State)
	}
	if r := c.Corral("nodes"); r.Code != 0 || !strings.Contains(r.Stdout, "drained") || !strings.Contains(r.Stdout, "new disks") {
		t.Fatalf("corral nodes: %d %q", r.Code, r.Stdout)
	}
	if r := c.Corral("nodes", "resume", "n1"); r.Code != 0 || r.Stdout != "resumed n1\n" {
		t.Fatalf("resume: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job %d after the resume: %s %s", id, j.State, j.Message)
	}
	if r := c.Corral("nodes", "drain", "n7", "--reason", "x"); r.Code != 1 || !strings.Contains(r.Stderr, "no node n7") {
		t.Fatalf("drain of an unknown node: %d %q", r.Code, r.Stderr)
	}

	// Down: the running job ends NODE_FAIL at once and its process is
	// killed when the node is next heard from; the node stays down.
	running := c.Submit(dir, "-c", "1", "--no-requeue", "--wrap", "sleep 300")
	c.WaitState(running, api.StateRunning, 30*time.Second)
	if r := c.Corral("nodes", "down", "n1", "--reason", "PSU failed"); r.Code != 0 || r.Stdout != "set down n1\n" {
		t.Fatalf("down: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if j := c.Job(running); j.State != api.StateNodeFail || !strings.Contains(j.Message, "PSU failed") {
		t.Fatalf("job on the downed node: %s %q", j.State, j.Message)
	}
	if r := c.Corral("nodes"); !strings.Contains(r.Stdout, "down") || !strings.Contains(r.Stdout, "PSU failed") {
		t.Fatalf("corral nodes after the down: %q", r.Stdout)
	}
	// n1's next heartbeat lists the run; the answer tells it to kill it,
	// and its shim ends and its directory goes.
	jobDirOnNode := filepath.Join(c.Dir, "node-n1", "jobs", strconv.FormatUint(running, 10))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(jobDirOnNode); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the downed node's old run is still there (%s)", jobDirOnNode)
		}
	}
	if r := c.Corral("nodes", "resume", "n1"); r.Code != 0 {
		t.Fatalf("resume after down: %d %q", r.Code, r.Stderr)
	}
	last := c.Submit(dir, "-c", "1", "--wrap", "true")
	if j := c.WaitEnded(last, 30*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job after resuming a downed node: %s %s", j.State, j.Message)
	}
}
