package e2e

import (
	"strconv"
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

// A job of two whole nodes requeued while it runs is pending again at its
// batch part's end while its other part still stops; that part holds its
// node, so the job queued behind it is not launched onto it (and refused,
// which took the node DOWN), and both jobs run to their end.
func TestRequeuedJobOfTwoNodesKeepsItsOtherNodeUntilItsPartStops(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	dir := jobDir(t)
	first := c.Submit(dir, "-N2", "-c", "2", "--requeue", "-o", "/dev/null", "--wrap",
		`[ "$SLURM_RESTART_COUNT" = 1 ] || sleep 300`)
	c.WaitState(first, api.StateRunning, time.Minute)
	second := c.Submit(dir, "-N2", "-c", "2", "-o", "/dev/null", "--wrap", "true")
	if r := c.Corral("requeue", strconv.FormatUint(first, 10)); r.Code != 0 {
		t.Fatalf("requeue: exit %d %s", r.Code, r.Stderr)
	}
	for _, id := range []uint64{first, second} {
		if j := c.WaitEnded(id, 2*time.Minute); j.State != api.StateCompleted {
			t.Errorf("job %d: %s, message %q", id, j.State, j.Message)
		}
	}
	if j := c.Job(first); j.Restarts != 1 {
		t.Errorf("the requeued job ran %d times again, want once", j.Restarts)
	}
	if log := c.Logs("ctld"); strings.Contains(log, "launch on") || strings.Contains(log, " down for ") {
		t.Errorf("a launch was refused:\n%s", log)
	}
}
