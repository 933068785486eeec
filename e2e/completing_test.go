package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Jobs of two whole nodes, back to back: each ends on its batch host
// while its part on the other node is still being stopped, and the next
// starts only once that part is gone (docs/steps.md, "The job's end on
// its other nodes"). Launched onto cores the node still used, the next
// job would be refused, sent back to PENDING and the node held DOWN.
func TestBackToBackJobsOfTwoWholeNodes(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	dir := jobDir(t)
	var ids []uint64
	for range 4 {
		ids = append(ids, c.Submit(dir, "-N2", "-c", "2", "-o", "/dev/null", "--wrap", "true"))
	}
	for _, id := range ids {
		j := c.WaitEnded(id, 2*time.Minute)
		if j.State != api.StateCompleted || j.Restarts != 0 || len(j.Runs) != 0 {
			t.Errorf("job %d: %s after %d restarts, message %q", id, j.State, j.Restarts, j.Message)
		}
	}
	if log := c.Logs("ctld"); strings.Contains(log, "launch on") || strings.Contains(log, " down for ") {
		t.Errorf("a launch was refused:\n%s", log)
	}
	for _, n := range []string{"n1", "n2"} {
		if r := c.Corral("nodes"); !strings.Contains(r.Stdout, n) || strings.Contains(r.Stdout, "down") {
			t.Errorf("node %s after the jobs:\n%s", n, r.Stdout)
		}
	}
}
