package e2e

import (
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
}
