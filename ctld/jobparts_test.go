package ctld

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// twoNodeJob starts a job of uidOwner's on two nodes and returns them
// in the job's node order (the batch host first) with their launches.
func twoNodeJob(t *testing.T, spec api.JobSpec) (*testCluster, *fakeNode, *fakeNode, uint64, api.LaunchRequest, api.LaunchRequest) {
	t.Helper()
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf))
	n1, n2 := newFakeNode(tc, "n1", 4, 8<<30), newFakeNode(tc, "n2", 4, 8<<30)
	n1.register()
	n2.register()
	id := tc.submitFor(uidOwner, spec)
	l1, l2 := n1.waitLaunch(), n2.waitLaunch()
	j := tc.waitJob(id, "running", inState(api.StateRunning))
	if j.Nodes[0] == "n2" {
		n1, n2, l1, l2 = n2, n1, l2, l1
	}
	return tc, n1, n2, id, l1, l2
}

func twoNodeSpec() api.JobSpec {
	no := false
	return api.JobSpec{Name: "mpi", Script: "#!/bin/sh\nsrun hostname\n", Nodes: 2, CPUs: 4, Ntasks: 6, CPUsPerTask: 1,
		MemBytes: 1 << 30, WorkDir: "/tmp", Requeue: &no, SubmitHost: "login1"}
}

// waitSignalled waits until node f was told to stop job id.
func waitSignalled(t *testing.T, f *fakeNode, id uint64) {
	t.Helper()
	waitFor(t, "job stopped on "+f.name, func() bool { return slices.Contains(f.signalled(), id) })
}

// A job of two nodes runs its script on the first (batch) and holds the
// allocation on the second (extern), each told its place and the task
// layout; when the script ends, both parts are stopped.
func TestJobLaunchesOnEveryNode(t *testing.T) {
	tc, n1, n2, id, l1, l2 := twoNodeJob(t, twoNodeSpec())
	for _, c := range []struct {
		l     api.LaunchRequest
		role  string
		index int
	}{{l1, api.RoleBatch, 0}, {l2, api.RoleExtern, 1}} {
		l := c.l
		if l.JobID != id || l.Role != c.role || l.NodeIndex != c.index || l.NodeList[c.index] != []string{n1.name, n2.name}[c.index] ||
			l.Ntasks != 6 || l.CPUsPerTask != 1 || !slices.Equal(l.TasksPerNode, []int{3, 3}) || !slices.Equal(l.CPUsPerNode, []int{4, 4}) ||
			l.Script == "" || l.UID != uidOwner || l.SubmitHost != "login1" || l.ClusterName != ClusterName {
			t.Errorf("launch on node %d: %+v", c.index, l)
		}
	}
	if err := n1.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "completed", inState(api.StateCompleted))
	waitSignalled(t, n2, id)
	waitSignalled(t, n1, id)
	// The extern part's end, when it comes, changes nothing.
	if err := n2.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateCompleted {
		t.Fatalf("the stopped extern part's end changed the job: %s", j.State)
	}
}

// An extern part that ends while its job runs is its node failing the
// job: NODE_FAIL, and the batch part is stopped. One that ends at the
// time limit (every node enforces it) leaves the job to its batch part.
func TestExternPartEndingFailsItsJob(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	timeout := api.JobEvent{JobID: id, Node: n2.name, Kind: api.EventEnded, Time: time.Now(), State: api.StateTimeout}
	if err := n2.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{timeout}}, nil); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("an extern part's end at the time limit ended the job %s", j.State)
	}
	ev := api.JobEvent{JobID: id, Node: n2.name, Kind: api.EventEnded, Time: time.Now(), State: api.StateFailed, ExitCode: 1,
		Message: "container gone after a reboot"}
	if err := n2.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
		t.Fatal(err)
	}
	j := tc.waitJob(id, "node fail", inState(api.StateNodeFail))
	if !strings.Contains(j.Message, n2.name) || !strings.Contains(j.Message, "container gone") {
		t.Fatalf("message = %q", j.Message)
	}
	waitSignalled(t, n1, id)
}

// A second node that does not report the job (it lost it) fails the job
// as a lost node does; one that reports it keeps it.
func TestExternPartMissingFromItsNode(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	waitFor(t, "both launches answered", func() bool {
		tc.srv.mu.RLock()
		defer tc.srv.mu.RUnlock()
		return tc.srv.q.jobs[id].launch.inFlight == 0
	})
	tc.backdateAck(id, time.Hour)
	if r := n1.register(); len(r.Kill) != 0 {
		t.Fatalf("n1 Kill = %v", r.Kill)
	}
	n2.set(func(f *fakeNode) { f.running = nil })
	n2.register()
	tc.waitJob(id, "node fail", inState(api.StateNodeFail))
	waitSignalled(t, n1, id)
}
