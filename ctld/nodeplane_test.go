package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func TestNodePlaneRejectsBadSignatures(t *testing.T) {
	tc := MustServer(t)
	body, _ := json.Marshal(api.RegisterRequest{Name: "evil", Addr: "127.0.0.1:1", CPUs: 64, MemBytes: 1 << 40})
	post := func(mod func(r *http.Request)) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, tc.srv.NodeURL()+"/v1/node/register", bytes.NewReader(body))
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error
	}
	wrongKey := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name    string
		mod     func(r *http.Request)
		wantErr string
	}{
		{"unsigned", func(r *http.Request) {}, "missing X-Corral-Auth"},
		{"wrong key", func(r *http.Request) { api.Sign(r, wrongKey, body, time.Now()) }, "bad signature"},
		{"stale", func(r *http.Request) { api.Sign(r, tc.srv.key, body, time.Now().Add(-time.Hour)) }, "off this host's clock"},
		{"body swapped", func(r *http.Request) { api.Sign(r, tc.srv.key, []byte(`{"name":"other"}`), time.Now()) }, "bad signature"},
		{"other path", func(r *http.Request) {
			r2, _ := http.NewRequest(http.MethodPost, tc.srv.NodeURL()+"/v1/node/events", nil)
			api.Sign(r2, tc.srv.key, body, time.Now())
			r.Header.Set(api.AuthHeader, r2.Header.Get(api.AuthHeader))
		}, "bad signature"},
		{"garbage header", func(r *http.Request) { r.Header.Set(api.AuthHeader, "t=abc,sig=00") }, "malformed"},
	}
	for _, tt := range tests {
		code, msg := post(tt.mod)
		if code != http.StatusUnauthorized || !strings.Contains(msg, tt.wantErr) {
			t.Errorf("%s: %d %q, want 401 %q", tt.name, code, msg, tt.wantErr)
		}
	}
	if nodes, _ := tc.client.Nodes(context.Background()); len(nodes) != 0 {
		t.Fatalf("a rejected registration created nodes: %+v", nodes)
	}
	// Events are checked the same way: a forged end changes nothing.
	node := newFakeNode(tc, "n1", 1, 1<<30)
	node.register()
	id := tc.submit(script("victim"))
	node.waitLaunch()
	forger := api.NewNodeClient(tc.srv.NodeURL(), wrongKey, time.Second)
	err := forger.Do(context.Background(), http.MethodPost, "/v1/node/events",
		api.EventsRequest{Events: []api.JobEvent{{JobID: id, Node: "n1", Kind: api.EventEnded, State: api.StateCompleted}}}, nil)
	if statusOf(err) != http.StatusUnauthorized {
		t.Fatalf("forged event: %v", err)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("forged event changed job to %s", j.State)
	}
	// Signed but invalid: one clear 400.
	err = node.ctld().Do(context.Background(), http.MethodPost, "/v1/node/register", api.RegisterRequest{Name: "bad name", Addr: "x:1", CPUs: 1}, nil)
	if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), `invalid node name "bad name"`) {
		t.Fatalf("invalid registration: %v", err)
	}
}

func TestRegisterAndList(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=small Nodes=n[1-2] Default=YES\nPartitionName=all Nodes=ALL\n"))
	resp := newFakeNode(tc, "n1", 4, 8<<30).register()
	if resp.HeartbeatInterval != 50 || len(resp.Kill) != 0 {
		t.Fatalf("register response = %+v", resp)
	}
	newFakeNode(tc, "big", 64, 1<<40).register()
	n := tc.node("n1")
	if n.State != api.NodeIdle || n.CPUs != 4 || n.MemBytes != 8<<30 || n.LastHeartbeat.IsZero() ||
		strings.Join(n.Partitions, ",") != "small,all" {
		t.Fatalf("n1 = %+v", n)
	}
	if b := tc.node("big"); strings.Join(b.Partitions, ",") != "all" {
		t.Fatalf("big partitions = %v", b.Partitions)
	}
	// Allocation drives IDLE / MIXED / ALLOCATED.
	id := tc.submit(api.JobSpec{Script: "x", CPUs: 2, MemBytes: 1 << 30, WorkDir: "/", Partition: "small"})
	tc.waitJob(id, "start", inState(api.StateRunning))
	if n := tc.node("n1"); n.State != api.NodeMixed || n.AllocCPUs != 2 || n.AllocMemBytes != 1<<30 || len(n.RunningJobs) != 1 {
		t.Fatalf("after one job: %+v", n)
	}
	id2 := tc.submit(api.JobSpec{Script: "x", CPUs: 2, MemBytes: 1 << 30, WorkDir: "/", Partition: "small"})
	tc.waitJob(id2, "start", inState(api.StateRunning))
	if n := tc.node("n1"); n.State != api.NodeAllocated {
		t.Fatalf("after two jobs: %s", n.State)
	}
}

func TestNodeDownAfterTimeout(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.NodeTimeout = 300 * time.Millisecond })
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	id := tc.submit(script("doomed"))
	node.waitLaunch()
	// The node stops heartbeating: DOWN, and its job ends NODE_FAIL.
	waitFor(t, "node down", func() bool { return tc.node("n1").State == api.NodeDown })
	if n := tc.node("n1"); n.Reason != "not responding" {
		t.Fatalf("reason %q", n.Reason)
	}
	j := tc.waitJob(id, "NODE_FAIL", inState(api.StateNodeFail))
	if j.EndTime == nil || !strings.Contains(j.Message, "not responding") {
		t.Fatalf("failed job: %+v", j)
	}
	// It comes back still running the job: it is told to kill it, the
	// job's cores stay allocated (COMPLETING) until it is gone, and the
	// late end event changes nothing else.
	resp := node.register()
	if len(resp.Kill) != 1 || resp.Kill[0] != id {
		t.Fatalf("Kill = %v, want [%d]", resp.Kill, id)
	}
	if n := tc.node("n1"); n.State != api.NodeCompleting || n.AllocCPUs != tc.job(id).CPUs || !slices.Equal(n.RunningJobs, []uint64{id}) || !tc.job(id).Completing {
		t.Fatalf("after re-register, still running the killed job: %s %v", n.State, n.RunningJobs)
	}
	if err := node.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateNodeFail || j.Completing {
		t.Fatalf("late end changed the job to %s (completing=%v)", j.State, j.Completing)
	}
	if n := tc.node("n1"); n.State != api.NodeIdle {
		t.Fatalf("after the killed job's end: %s", n.State)
	}
}

func TestEventsAreIdempotent(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	id := tc.submit(script("once"))
	node.waitLaunch()
	for i := 0; i < 3; i++ {
		if err := node.end(id, api.StateFailed, 3); err != nil {
			t.Fatalf("end #%d: %v", i+1, err)
		}
	}
	j := tc.job(id)
	if j.State != api.StateFailed || j.ExitCode == nil || *j.ExitCode != 3 || j.PeakMemBytes != 4096 || j.CPUTimeUsec != 1500 ||
		j.EndTime == nil || len(j.History) != 3 {
		t.Fatalf("job after duplicate ends: %+v", j)
	}
	// Events about unknown jobs, other nodes or odd states are answered 200
	// (the node must stop resending) and change nothing they should not.
	events := []api.JobEvent{
		{JobID: 999, Node: "n1", Kind: api.EventEnded, State: api.StateCompleted},
		{JobID: id, Node: "n1", Kind: api.EventStarted},
	}
	if err := node.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: events}, nil); err != nil {
		t.Fatal(err)
	}
	id2 := tc.submit(script("odd"))
	node.waitLaunch()
	events = []api.JobEvent{
		{JobID: id2, Node: "elsewhere", Kind: api.EventEnded, State: api.StateCompleted},
		{JobID: id2, Node: "n1", Kind: api.EventEnded, State: "EXPLODED", ExitCode: 1},
	}
	if err := node.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: events}, nil); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id2); j.State != api.StateFailed || !strings.Contains(j.Message, "EXPLODED") {
		t.Fatalf("odd end state recorded as %s %q", j.State, j.Message)
	}
}

func TestReconcileOnRegister(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	// A job the controller never heard of is killed.
	node.set(func(f *fakeNode) { f.running = append(f.running, 777) })
	if resp := node.register(); len(resp.Kill) != 1 || resp.Kill[0] != 777 {
		t.Fatalf("Kill = %v, want [777]", resp.Kill)
	}
	node.set(func(f *fakeNode) { f.running = nil })

	// A launch still on its way is never judged lost, however old.
	hold := make(chan struct{})
	node.set(func(f *fakeNode) { f.holdLaunch = hold })
	inFlight := tc.submit(script("in-flight"))
	tc.waitJob(inFlight, "RUNNING", inState(api.StateRunning))
	tc.backdateStart(inFlight, time.Hour)
	node.register() // does not list the job: its launch is unanswered
	if j := tc.job(inFlight); j.State != api.StateRunning {
		t.Fatalf("in-flight launch judged lost: %s", j.State)
	}
	close(hold)
	node.waitLaunch()
	tc.waitAcked(inFlight)

	// Acknowledged recently and missing: not yet judged (the heartbeat may
	// predate the launch). Acknowledged long ago and missing: lost.
	node.set(func(f *fakeNode) { f.running = nil })
	node.register()
	if j := tc.job(inFlight); j.State != api.StateRunning {
		t.Fatalf("freshly acknowledged job judged lost: %s", j.State)
	}
	tc.backdateAck(inFlight, time.Hour)
	node.register()
	j := tc.job(inFlight)
	if j.State != api.StateNodeFail || !strings.Contains(j.Message, "does not report") {
		t.Fatalf("lost job: %s %q", j.State, j.Message)
	}
}

// backdateStart moves a job's start (and what is known of its launch)
// into the past, as if time had passed.
func (tc *testCluster) backdateStart(id uint64, by time.Duration) {
	tc.srv.mu.Lock()
	defer tc.srv.mu.Unlock()
	j := tc.srv.q.jobs[id]
	at := j.rec.Job.StartTime.Add(-by)
	j.rec.Job.StartTime = &at
}

func (tc *testCluster) waitAcked(id uint64) {
	tc.t.Helper()
	waitFor(tc.t, "launch acknowledged", func() bool {
		tc.srv.mu.RLock()
		defer tc.srv.mu.RUnlock()
		return !tc.srv.q.jobs[id].launch.ackedAt.IsZero()
	})
}

func (tc *testCluster) backdateAck(id uint64, by time.Duration) {
	tc.srv.mu.Lock()
	defer tc.srv.mu.Unlock()
	j := tc.srv.q.jobs[id]
	if j.launch.ackedAt.IsZero() {
		tc.t.Fatalf("job %d launch not acknowledged", id)
	}
	j.launch.ackedAt = j.launch.ackedAt.Add(-by)
}

func TestNodeThatNeverReturnsAfterRestart(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	id := tc.submit(script("orphan"))
	node.waitLaunch()
	tc.cfg.NodeTimeout = 300 * time.Millisecond
	tc.Restart()
	// Known but DOWN; given a full timeout to come back, then its job is
	// given up.
	if n := tc.node("n1"); n.State != api.NodeDown || n.Reason != "not responding" {
		t.Fatalf("after restart: %+v", n)
	}
	j := tc.waitJob(id, "NODE_FAIL", inState(api.StateNodeFail))
	if len(j.History) != 3 || j.History[2].State != api.StateNodeFail {
		t.Fatalf("history %+v", j.History)
	}
}

// TestStopDuringLaunchIsRepeated: a cancel sent while the job's launch is
// still unanswered may reach the node first and find nothing to stop; once
// the launch is answered the controller sends it again.
func TestStopDuringLaunchIsRepeated(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	hold := make(chan struct{})
	node.set(func(f *fakeNode) { f.holdLaunch = hold })
	id := tc.submit(script("raced"))
	tc.waitJob(id, "RUNNING", inState(api.StateRunning))
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}); err != nil {
		t.Fatal(err)
	}
	if got := node.signalled(); !slices.Equal(got, []uint64{id}) {
		t.Fatalf("signals before the launch is answered: %v, want [%d]", got, id)
	}
	close(hold)
	node.waitLaunch()
	waitFor(t, "the stop repeated after the launch", func() bool { return len(node.signalled()) == 2 })
	if got := node.signalled(); got[1] != id {
		t.Fatalf("signals: %v", got)
	}

	// A launch answered before the cancel: one signal, not two.
	node.set(func(f *fakeNode) { f.holdLaunch = nil; f.signals = nil })
	calm := tc.submit(script("calm"))
	node.waitLaunch()
	tc.waitAcked(calm)
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{calm}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := node.signalled(); !slices.Equal(got, []uint64{calm}) {
		t.Fatalf("signals for a job launched before its cancel: %v, want [%d]", got, calm)
	}
}
