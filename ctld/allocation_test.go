package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func allocSpec(nodes int) api.JobSpec {
	no := false
	return api.JobSpec{Name: "interactive", Allocation: true, Nodes: nodes, CPUs: 4, MemBytes: 1 << 30,
		WorkDir: "/tmp", Requeue: &no}
}

// allocCall renews (or releases) allocation id as uid.
func allocCall(t *testing.T, tc *testCluster, uid uint32, id uint64, req api.AllocationRequest) (api.Allocation, int, string) {
	t.Helper()
	code, body := callAs(t, tc, uid, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/allocation", id), req)
	var a api.Allocation
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("allocation: %v: %s", err, body)
		}
	}
	return a, code, string(body)
}

func mustAlloc(t *testing.T, tc *testCluster, id uint64, req api.AllocationRequest) api.Allocation {
	t.Helper()
	a, code, body := allocCall(t, tc, uidOwner, id, req)
	if code != http.StatusOK {
		t.Fatalf("allocation %d: %d %s", id, code, body)
	}
	return a
}

// An allocation of two nodes holds both (extern, no script), is ready
// for steps once launched, and ends as its client's command ended: the
// release stops its first node, whose report ends it COMPLETED (exit 0)
// or FAILED (the code), and then its other node is stopped.
func TestAllocationHeldOnEveryNodeAndReleased(t *testing.T) {
	for _, code := range []int{0, 3} {
		t.Run(fmt.Sprint("exit ", code), func(t *testing.T) {
			tc, n1, n2, id, l1, l2 := twoNodeJob(t, allocSpec(2))
			for i, l := range []api.LaunchRequest{l1, l2} {
				if l.Role != api.RoleExtern || l.Script != "" || l.NodeIndex != i {
					t.Errorf("launch on node %d: role %q, script %q, index %d", i, l.Role, l.Script, l.NodeIndex)
				}
			}
			var a api.Allocation
			waitFor(t, "allocation ready", func() bool { a = mustAlloc(t, tc, id, api.AllocationRequest{}); return a.Ready })
			if a.JobID != id || a.State != api.StateRunning || !a.Ready || len(a.Nodes) != 2 || a.CPUs != 4 || a.Renew < 1 {
				t.Fatalf("allocation = %+v", a)
			}
			mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 2})

			a = mustAlloc(t, tc, id, api.AllocationRequest{Release: true, ExitCode: code})
			if a.State != api.StateRunning || a.Ready {
				t.Fatalf("released allocation before its node reported = %+v", a)
			}
			waitSignalled(t, n1, id)
			if _, c, body := askStep(t, tc, uidOwner, id, api.StepRequest{Overlap: true}); c != http.StatusConflict ||
				!strings.Contains(body, "already completing") {
				t.Fatalf("step in a released allocation: %d %s", c, body)
			}
			if err := n1.end(id, api.StateCancelled, 0); err != nil {
				t.Fatal(err)
			}
			want := api.StateCompleted
			if code != 0 {
				want = api.StateFailed
			}
			j := tc.waitJob(id, "ended", func(j api.Job) bool { return j.State.Terminal() })
			if j.State != want || j.ExitCode == nil || *j.ExitCode != code {
				t.Fatalf("released with %d: job %s exit %v, want %s", code, j.State, j.ExitCode, want)
			}
			waitSignalled(t, n2, id)
			// A late renewal or release changes nothing.
			if a := mustAlloc(t, tc, id, api.AllocationRequest{Release: true, ExitCode: 9}); a.State != want {
				t.Fatalf("allocation after its end = %+v", a)
			}
		})
	}
}

// The release is answered once it is recorded, without waiting for the
// node to take the stop (srun outside an allocation exits at once); the
// stop still reaches the node, and its report ends the job.
func TestAllocationReleaseDoesNotWaitForTheNode(t *testing.T) {
	tc, n1, _, id, _, _ := twoNodeJob(t, allocSpec(2))
	waitFor(t, "allocation ready", func() bool { return mustAlloc(t, tc, id, api.AllocationRequest{}).Ready })
	hold := make(chan struct{})
	n1.mu.Lock()
	n1.holdSignal = hold
	n1.mu.Unlock()
	type answer struct {
		a    api.Allocation
		code int
		body string
	}
	answered := make(chan answer, 1)
	go func() {
		a, code, body := allocCall(t, tc, uidOwner, id, api.AllocationRequest{Release: true, ExitCode: 0})
		answered <- answer{a, code, body}
	}()
	select {
	case got := <-answered:
		if got.code != http.StatusOK || got.a.State != api.StateRunning || got.a.Ready {
			t.Fatalf("release: %d %s: %+v", got.code, got.body, got.a)
		}
	case <-time.After(10 * time.Second):
		close(hold)
		t.Fatal("the release waited for the node to take the stop")
	}
	if slices.Contains(n1.signalled(), id) {
		t.Fatal("the node took the stop while it was held")
	}
	close(hold)
	waitSignalled(t, n1, id)
	if err := n1.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.waitJob(id, "ended", func(j api.Job) bool { return j.State.Terminal() }); j.State != api.StateCompleted {
		t.Fatalf("released allocation ended %s, want COMPLETED", j.State)
	}
}

// Only an allocation's owner (or an operator) renews or releases it, and
// only an allocation; releasing one still pending cancels it.
func TestAllocationRefusalsAndPendingRelease(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf))
	n1 := newFakeNode(tc, "n1", 4, 8<<30)
	n1.register()
	batch := tc.submitFor(uidOwner, script("batch"))
	if _, code, body := allocCall(t, tc, uidOwner, batch, api.AllocationRequest{}); code != http.StatusBadRequest ||
		!strings.Contains(body, "not an allocation") {
		t.Fatalf("renewing a batch job: %d %s", code, body)
	}
	n1.waitLaunch()
	waiting := tc.submitFor(uidOwner, allocSpec(1)) // the batch job holds the node
	if _, code, body := allocCall(t, tc, nobody, waiting, api.AllocationRequest{Release: true}); code != http.StatusForbidden ||
		!strings.Contains(body, "belongs to") {
		t.Fatalf("another user's release: %d %s", code, body)
	}
	if _, code, _ := allocCall(t, tc, uidOwner, waiting+100, api.AllocationRequest{}); code != http.StatusNotFound {
		t.Fatalf("renewing an unknown job: %d", code)
	}
	if a := mustAlloc(t, tc, waiting, api.AllocationRequest{}); a.State != api.StatePending || a.Ready {
		t.Fatalf("pending allocation = %+v", a)
	}
	if a := mustAlloc(t, tc, waiting, api.AllocationRequest{Release: true, ExitCode: 130}); a.State != api.StateCancelled {
		t.Fatalf("released pending allocation = %+v", a)
	}
}

// An allocation whose client stops renewing it is cancelled once the
// inactivity bound passes: a running one's node is told to stop it, and
// it ends CANCELLED; a pending one ends at once.
func TestAbandonedAllocationIsCancelled(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf), func(c *Config) { c.AllocIdleLimit = 300 * time.Millisecond })
	nodes := map[string]*fakeNode{"n1": newFakeNode(tc, "n1", 4, 8<<30), "n2": newFakeNode(tc, "n2", 4, 8<<30)}
	for _, f := range nodes {
		f.register()
	}
	tc.submitFor(uidOwner, script("holder"))
	running := tc.submitFor(uidOwner, allocSpec(1))
	host := nodes[tc.waitJob(running, "running", inState(api.StateRunning)).Nodes[0]]
	waiting := tc.submitFor(uidOwner, allocSpec(1))
	if j := tc.waitJob(waiting, "ended", func(j api.Job) bool { return j.State.Terminal() }); j.State != api.StateCancelled {
		t.Fatalf("abandoned pending allocation ended %s", j.State)
	}
	waitSignalled(t, host, running)
	if err := host.end(running, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.waitJob(running, "ended", func(j api.Job) bool { return j.State.Terminal() }); j.State != api.StateCancelled {
		t.Fatalf("abandoned allocation ended %s", j.State)
	}
}

// The inactivity bound comes from the Config when it sets one, else from
// corral.conf's InactiveLimit (0: never, as in Slurm), else 15 seconds.
func TestAllocIdleLimit(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	for _, tt := range []struct {
		cfg  time.Duration
		file *time.Duration
		want time.Duration
	}{
		{0, nil, defaultAllocIdleLimit},
		{0, d(time.Minute), time.Minute},
		{0, d(0), -1},
		{time.Second, d(time.Minute), time.Second},
		{-1, nil, -1},
	} {
		if got := allocIdleLimit(tt.cfg, tt.file); got != tt.want {
			t.Errorf("config %v, file %v: %v, want %v", tt.cfg, tt.file, got, tt.want)
		}
	}
}

// InactiveLimit in corral.conf bounds an abandoned allocation as the
// Config's bound does.
func TestInactiveLimitFromTheFile(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf+"InactiveLimit=1\n"))
	waiting := tc.submitFor(uidOwner, allocSpec(1)) // no node: it stays pending
	if j := tc.waitJob(waiting, "ended", func(j api.Job) bool { return j.State.Terminal() }); j.State != api.StateCancelled {
		t.Fatalf("abandoned pending allocation ended %s", j.State)
	}
	if a := mustAlloc(t, tc, tc.submitFor(uidOwner, allocSpec(1)), api.AllocationRequest{}); a.Renew != 1 {
		t.Fatalf("renew every %d s under a 1 s bound, want 1", a.Renew)
	}
}

// A renewal with WaitReadyMs is held until the allocation is ready: its
// client learns of the grant the moment the last node took its launch,
// not at its next poll. Without a change it answers at the wait's end.
func TestAllocationWaitReady(t *testing.T) {
	defer func(d time.Duration) { maxAllocationWait = d }(maxAllocationWait)
	maxAllocationWait = time.Minute
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf))
	n1 := newFakeNode(tc, "n1", 4, 8<<30)
	hold := make(chan struct{})
	n1.mu.Lock()
	n1.holdLaunch = hold
	n1.mu.Unlock()
	n1.register()
	id := tc.submitFor(uidOwner, allocSpec(1))
	tc.waitJob(id, "running", func(j api.Job) bool { return j.State == api.StateRunning })
	if a := mustAlloc(t, tc, id, api.AllocationRequest{WaitReadyMs: 20}); a.Ready || a.State != api.StateRunning {
		t.Fatalf("a held renewal while the launch is unanswered = %+v", a)
	}
	got := make(chan api.Allocation, 1)
	go func() {
		a, _, _ := allocCall(t, tc, uidOwner, id, api.AllocationRequest{WaitReadyMs: 60_000})
		got <- a
	}()
	close(hold)
	if a := <-got; !a.Ready || a.State != api.StateRunning {
		t.Fatalf("held renewal answered %+v, want ready", a)
	}
	// An allocation that ends while a renewal is held answers its end.
	pending := tc.submitFor(uidOwner, allocSpec(1)) // the first holds the node
	go func() {
		a, _, _ := allocCall(t, tc, uidOwner, pending, api.AllocationRequest{WaitReadyMs: 60_000})
		got <- a
	}()
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{pending}}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a.State != api.StateCancelled {
		t.Fatalf("held renewal of a cancelled allocation answered %+v", a)
	}
}
