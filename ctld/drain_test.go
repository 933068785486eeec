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

// A drained node takes no new jobs, its running job finishes, the drain
// survives a re-registration and a controller restart, and a resume lets
// the waiting job start.
func TestDrainAndResume(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 1, 4<<30)
	node.register()
	running := tc.submit(script("running"))
	node.waitLaunch()
	tc.waitAcked(running)

	resp, err := tc.client.Drain(context.Background(), api.DrainRequest{Nodes: []string{"n1"}, Reason: "disk swap"})
	if err != nil || !slices.Equal(resp.Nodes, []string{"n1"}) {
		t.Fatalf("drain: %+v, %v", resp, err)
	}
	if n := tc.node("n1"); n.State != api.NodeDraining || n.Reason != "disk swap" || n.DrainedSince == nil {
		t.Fatalf("drained node with a job: %s %q %v", n.State, n.Reason, n.DrainedSince)
	}
	waiting := tc.submit(script("waiting"))
	if err := node.end(running, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(running, "COMPLETED", inState(api.StateCompleted))
	node.register()
	time.Sleep(200 * time.Millisecond) // cycles run on the end and the heartbeat
	node.noLaunch()
	if j := tc.job(waiting); j.State != api.StatePending {
		t.Fatalf("job on a drained node: %s", j.State)
	}
	if n := tc.node("n1"); n.State != api.NodeDrained || n.Reason != "disk swap" {
		t.Fatalf("drained idle node: %s %q", n.State, n.Reason)
	}

	tc.Restart()
	node.register()
	time.Sleep(200 * time.Millisecond)
	node.noLaunch()
	if n := tc.node("n1"); n.State != api.NodeDrained || n.Reason != "disk swap" {
		t.Fatalf("after a controller restart: %s %q", n.State, n.Reason)
	}

	resp, err = tc.client.Resume(context.Background(), api.ResumeRequest{Nodes: []string{"n[1-1]"}})
	if err != nil || !slices.Equal(resp.Nodes, []string{"n1"}) {
		t.Fatalf("resume: %+v, %v", resp, err)
	}
	if l := node.waitLaunch(); l.JobID != waiting {
		t.Fatalf("launched %d after the resume, want %d", l.JobID, waiting)
	}
	if n := tc.node("n1"); n.Reason != "" || n.DrainedSince != nil || n.State == api.NodeDrained || n.State == api.NodeDraining {
		t.Fatalf("resumed node: %+v", n)
	}
	// Resuming again changes nothing and is not an error.
	if resp, err := tc.client.Resume(context.Background(), api.ResumeRequest{Nodes: []string{"n1"}}); err != nil || len(resp.Nodes) != 0 {
		t.Fatalf("second resume: %+v, %v", resp, err)
	}
}

func TestDrainRefusals(t *testing.T) {
	tc := MustServer(t)
	for _, name := range []string{"n1", "n2"} {
		newFakeNode(tc, name, 1, 1<<30).register()
	}
	for _, tc2 := range []struct {
		req  api.DrainRequest
		code int
		want string
	}{
		{api.DrainRequest{Nodes: []string{"n1", "n7"}, Reason: "x"}, http.StatusNotFound, "no node n7 (nothing changed)"},
		{api.DrainRequest{Nodes: []string{"n1"}, Reason: "  "}, http.StatusBadRequest, "a reason is required"},
		{api.DrainRequest{Nodes: []string{"n1"}, Reason: "two\nlines"}, http.StatusBadRequest, "one line"},
		{api.DrainRequest{Nodes: []string{"n[1-"}, Reason: "x"}, http.StatusBadRequest, "drain: "},
		{api.DrainRequest{Reason: "x"}, http.StatusBadRequest, "at least one node"},
	} {
		_, err := tc.client.Drain(context.Background(), tc2.req)
		if statusOf(err) != tc2.code || !strings.Contains(err.Error(), tc2.want) {
			t.Errorf("drain %+v: %v (status %d), want %d %q", tc2.req, err, statusOf(err), tc2.code, tc2.want)
		}
	}
	for _, name := range []string{"n1", "n2"} {
		if n := tc.node(name); n.State != api.NodeIdle || n.Reason != "" {
			t.Errorf("%s after refused drains: %s %q", name, n.State, n.Reason)
		}
	}
	// Both by one hostlist expression; a new reason keeps the drain's start.
	resp, err := tc.client.Drain(context.Background(), api.DrainRequest{Nodes: []string{"n[1-2]"}, Reason: "first"})
	if err != nil || !slices.Equal(resp.Nodes, []string{"n1", "n2"}) {
		t.Fatalf("drain n[1-2]: %+v, %v", resp, err)
	}
	since := *tc.node("n1").DrainedSince
	if _, err := tc.client.Drain(context.Background(), api.DrainRequest{Nodes: []string{"n1"}, Reason: "second"}); err != nil {
		t.Fatal(err)
	}
	if n := tc.node("n1"); n.Reason != "second" || !n.DrainedSince.Equal(since) {
		t.Errorf("re-drained: %q since %v, want second since %v", n.Reason, n.DrainedSince, since)
	}
}

// Setting a node DOWN declares it dead: its running jobs end at once
// (requeued when they allow it) and a requeued one starts on another node
// straight away, though the dead node never confirmed the old run gone.
// The node stays DOWN through its own registrations, is told to kill what
// it still runs, and comes back only when resumed.
func TestDownDeclaresRunsDead(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	n1 := newFakeNode(tc, "n1", 1, 4<<30)
	n1.register()
	spec := script("requeueable")
	spec.Requeue = ptr(true)
	requeueable := tc.submit(spec)
	n1.waitLaunch()
	tc.waitAcked(requeueable)
	n2 := newFakeNode(tc, "n2", 1, 4<<30) // registers only after the down

	resp, err := tc.client.Down(context.Background(), api.DownRequest{Nodes: []string{"n1"}, Reason: "PSU failed"})
	if err != nil || !slices.Equal(resp.Nodes, []string{"n1"}) {
		t.Fatalf("down: %+v, %v", resp, err)
	}
	j := tc.job(requeueable)
	if j.State != api.StatePending || j.Restarts != 1 || !strings.Contains(j.Runs[0].Message, "set DOWN by an administrator: PSU failed") {
		t.Fatalf("job on the downed node: %s restarts %d runs %+v", j.State, j.Restarts, j.Runs)
	}
	if n := tc.node("n1"); n.State != api.NodeDown || n.Reason != "PSU failed" {
		t.Fatalf("downed node: %s %q", n.State, n.Reason)
	}
	// n1 never confirmed the run gone, yet the job may run on n2 now.
	n2.register()
	if l := n2.waitLaunch(); l.JobID != requeueable {
		t.Fatalf("n2 launched %d, want the requeued %d", l.JobID, requeueable)
	}
	// n1 heartbeats, still listing the old run: it stays DOWN and is told
	// to kill it; nothing is launched there.
	if resp := n1.register(); !slices.Contains(resp.Kill, requeueable) {
		t.Fatalf("n1's heartbeat got kill %v, want the old run %d", resp.Kill, requeueable)
	}
	if n := tc.node("n1"); n.State != api.NodeDown {
		t.Fatalf("downed node after its heartbeat: %s", n.State)
	}
	other := tc.submit(script("other")) // n2 is busy; n1 is down
	time.Sleep(100 * time.Millisecond)
	n1.noLaunch()
	tc.Restart() // the down is in the state file
	n2.register()
	n1.register()
	time.Sleep(100 * time.Millisecond)
	n1.noLaunch()
	if n := tc.node("n1"); n.State != api.NodeDown || n.Reason != "PSU failed" {
		t.Fatalf("downed node after a controller restart: %s %q", n.State, n.Reason)
	}

	if _, err := tc.client.Resume(context.Background(), api.ResumeRequest{Nodes: []string{"n1"}}); err != nil {
		t.Fatal(err)
	}
	n1.set(func(f *fakeNode) { f.running = nil })
	n1.register()
	if l := n1.waitLaunch(); l.JobID != other {
		t.Fatalf("resumed n1 launched %d, want %d", l.JobID, other)
	}
}
