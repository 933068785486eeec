package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// A node refuses a launch for the job's own reasons (issue 11, finding 4:
// a --mount on a node without --mount-root): the job ends FAILED with the
// node's reason, the node stays up, and the next job starts on it at once.
// (The harness holds a node DOWN for an hour after a node-fault launch
// failure: had the node been marked down, the second launch never came.)
func TestJobFaultRefusalFailsJobNodeStaysUp(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) {
		f.refusal = &api.Error{Error: "launch of job 1: node n1 allows no --mount (no --mount-root)", Kind: api.KindJobRefused}
	})
	node.register()
	id := tc.submit(script("refused"))
	j := tc.waitJob(id, "FAILED", inState(api.StateFailed))
	if j.Reason != api.ReasonLaunchFailed || !strings.Contains(j.Message, "launch refused by node n1") ||
		!strings.Contains(j.Message, "allows no --mount") || j.EndTime == nil {
		t.Fatalf("refused job: reason %s message %q end %v", j.Reason, j.Message, j.EndTime)
	}
	if n := tc.node("n1"); n.State == api.NodeDown {
		t.Fatalf("node after a job-fault refusal: %s %q", n.State, n.Reason)
	}
	node.set(func(f *fakeNode) { f.refusal = nil })
	id2 := tc.submit(script("next"))
	if l := node.waitLaunch(); l.JobID != id2 {
		t.Fatalf("launched %d, want the next job %d", l.JobID, id2)
	}
	tc.waitJob(id2, "RUNNING", inState(api.StateRunning))
	if j := tc.job(id); j.State != api.StateFailed {
		t.Fatalf("the refused job came back: %s", j.State)
	}
}

// A refusal without the job-fault kind (here a 400 an older or confused
// node might send) is the node's: the job goes back to PENDING and the
// node is held DOWN, as before.
func TestNodeFaultRefusalMarksNodeDown(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) { f.refusal = &api.Error{Error: "bad request body: something new"} })
	node.register()
	id := tc.submit(script("bounce"))
	j := tc.waitJob(id, "requeue", func(j api.Job) bool { return j.Reason == api.ReasonLaunchFailed })
	if j.State != api.StatePending || !strings.Contains(j.Message, "something new") {
		t.Fatalf("job after a node-fault refusal: %s %q", j.State, j.Message)
	}
	if n := tc.node("n1"); n.State != api.NodeDown || !strings.HasPrefix(n.Reason, "launch failed") {
		t.Fatalf("node after a node-fault refusal: %s %q", n.State, n.Reason)
	}
}

// A job whose launches keep failing for node faults does not bounce
// forever, holding node after node DOWN: after lifecycle.MaxLaunchFailures in a row
// it is held (JobHeldAdmin) and launched no more until released.
func TestLaunchFailuresInARowHoldTheJob(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.LaunchFailureHold = 20 * time.Millisecond })
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) { f.refuse = true })
	node.register()
	stop := make(chan struct{})
	beating := make(chan struct{})
	go func() { // heartbeats end each hold
		defer close(beating)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				node.register()
			}
		}
	}()
	id := tc.submit(script("bounce"))
	j := tc.waitJob(id, "held", func(j api.Job) bool { return j.Reason == api.ReasonJobHeldAdmin })
	close(stop)
	<-beating
	starts := 0
	for _, h := range j.History {
		if h.State == api.StateRunning {
			starts++
		}
	}
	if j.State != api.StatePending || j.Hold == "" || starts != lifecycle.MaxLaunchFailures ||
		!strings.Contains(j.Message, "held after 3 failed launches in a row") {
		t.Fatalf("job after %d launch failures: %s hold %q message %q, %d starts", lifecycle.MaxLaunchFailures, j.State, j.Hold, j.Message, starts)
	}
	// Released, it starts again (and its count starts over).
	node.set(func(f *fakeNode) { f.refuse = false })
	time.Sleep(30 * time.Millisecond) // past the last hold
	node.register()
	tc.control("release", id)
	if l := node.waitLaunch(); l.JobID != id {
		t.Fatalf("launched %d, want the released job %d", l.JobID, id)
	}
	tc.waitJob(id, "RUNNING", inState(api.StateRunning))
}

// A launch larger than a node accepts is the job's fault, found before
// anything is sent (its client is nil here).
func TestOversizedLaunchIsTheJobsFault(t *testing.T) {
	err := launchOrder{req: api.LaunchRequest{JobID: 1, Script: strings.Repeat("<", api.MaxLaunchBytes/4)}}.send(context.Background())
	if !api.JobRefused(err) || !strings.Contains(err.Error(), "nodes take at most") {
		t.Fatalf("oversized launch: %v", err)
	}
}

// Submit refuses a --mount that no node of the partition allows, with one
// line naming the mount and what is allowed; nodes report their roots.
func TestSubmitRefusesMountNoNodeAllows(t *testing.T) {
	tc := MustServer(t)
	spec := func(src string) api.JobSpec {
		s := script("mount")
		s.Mounts = []api.Mount{{Source: src, Target: "/mnt", ReadOnly: true}}
		return s
	}
	// No node known yet: accepted (nodes may register later).
	tc.submit(spec("/usr"))
	n1 := newFakeNode(tc, "n1", 2, 4<<30)
	n1.set(func(f *fakeNode) { f.refuse = true }) // nothing here may start
	n1.register()
	_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec("/usr")})
	if statusOf(err) != 400 || !strings.Contains(err.Error(), "no node of partition") ||
		!strings.Contains(err.Error(), "allow no --mount") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("--mount with no node allowing mounts: %v", err)
	}
	n2 := newFakeNode(tc, "n2", 2, 4<<30)
	n2.set(func(f *fakeNode) { f.refuse, f.mountRoots = true, []string{"/data"} })
	n2.register()
	_, err = tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec("/usr")})
	if statusOf(err) != 400 || !strings.Contains(err.Error(), "--mount /usr") || !strings.Contains(err.Error(), "/data") {
		t.Fatalf("--mount outside every root: %v", err)
	}
	for _, ok := range []string{"/data", "/data/x/y", "/data/x/../z"} {
		if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec(ok)}); err != nil {
			t.Errorf("--mount %s with a node allowing /data: %v", ok, err)
		}
	}
	for _, bad := range []string{"/database", "/data/../etc"} {
		if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec(bad)}); statusOf(err) != 400 {
			t.Errorf("--mount %s: %v, want 400", bad, err)
		}
	}
	// The roots are kept with the node record: a restarted controller
	// checks them before the node registers again.
	tc.Restart()
	if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec("/usr")}); statusOf(err) != 400 {
		t.Fatalf("--mount /usr after a restart: %v", err)
	}
}
