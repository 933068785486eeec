package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// testCluster is a controller running in-process on a temp state dir,
// with a user-plane client on its real Unix socket.
type testCluster struct {
	t      testing.TB
	cfg    Config
	srv    *Server
	client *api.Client
	logs   *lockedBuffer
	cancel context.CancelFunc
	done   chan error
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// withPartitions writes a config file with these lines.
func withPartitions(text string) func(*Config) {
	return func(c *Config) {
		path := filepath.Join(c.StateDir, "..", "corral.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			panic(err)
		}
		c.ConfigFile = path
	}
}

// MustServer starts a controller; it is stopped when the test ends. The
// socket lives under a short temp dir (Unix socket paths are limited).
func MustServer(t testing.TB, opts ...func(*Config)) *testCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctld")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	logs := &lockedBuffer{}
	cfg := Config{
		StateDir:          filepath.Join(dir, "state"),
		Socket:            filepath.Join(dir, "u.sock"),
		Listen:            "127.0.0.1:0",
		InsecurePlaintext: true, // the fake nodes serve plain HTTP; tls_test.go covers TLS
		NodeTimeout:       time.Minute,
		Heartbeat:         50 * time.Millisecond,
		LaunchFailureHold: time.Hour,
		Logger:            log.New(logs, "", log.Lmicroseconds),
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(&cfg)
	}
	tc := &testCluster{t: t, cfg: cfg, logs: logs}
	tc.start()
	t.Cleanup(func() {
		tc.Stop()
		if t.Failed() {
			t.Logf("controller log:\n%s", logs)
		}
	})
	return tc
}

func (tc *testCluster) start() {
	tc.t.Helper()
	srv, err := New(tc.cfg)
	if err != nil {
		tc.t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tc.srv, tc.cancel, tc.done = srv, cancel, make(chan error, 1)
	go func() { tc.done <- srv.Run(ctx) }()
	tc.client = api.NewClient(srv.SocketPath())
}

// Stop shuts the controller down and waits for Run to return.
func (tc *testCluster) Stop() {
	if tc.cancel == nil {
		return
	}
	tc.cancel()
	tc.cancel = nil
	if err := <-tc.done; err != nil {
		tc.t.Errorf("Run: %v", err)
	}
}

// Restart stops the controller and starts a new one on the same state.
func (tc *testCluster) Restart() {
	tc.t.Helper()
	tc.Stop()
	tc.start()
}

func (tc *testCluster) submit(spec api.JobSpec) uint64 {
	tc.t.Helper()
	id, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
	if err != nil {
		tc.t.Fatalf("submit: %v", err)
	}
	return id
}

func (tc *testCluster) job(id uint64) api.Job {
	tc.t.Helper()
	j, err := tc.client.Job(context.Background(), id)
	if err != nil {
		tc.t.Fatalf("job %d: %v", id, err)
	}
	return *j
}

func (tc *testCluster) node(name string) api.Node {
	tc.t.Helper()
	nodes, err := tc.client.Nodes(context.Background())
	if err != nil {
		tc.t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	tc.t.Fatalf("node %s not listed", name)
	return api.Node{}
}

// waitJob waits until job id satisfies cond.
func (tc *testCluster) waitJob(id uint64, what string, cond func(api.Job) bool) api.Job {
	tc.t.Helper()
	var j api.Job
	waitFor(tc.t, what, func() bool { j = tc.job(id); return cond(j) })
	return j
}

func inState(st api.JobState) func(api.Job) bool {
	return func(j api.Job) bool { return j.State == st }
}

// waitFor polls cond; the deadline is generous because it guards against
// hangs, not slowness.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func script(name string) api.JobSpec {
	return api.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n", CPUs: 1, MemBytes: 1 << 20, WorkDir: "/tmp"}
}

// fakeNode is a node daemon stand-in: it verifies signatures like noded,
// accepts launches, and lets the test send registrations and events.
type fakeNode struct {
	t        testing.TB
	name     string
	cpus     int
	mem      int64
	key      []byte
	srv      *httptest.Server
	tc       *testCluster
	launched chan api.LaunchRequest

	mu         sync.Mutex
	running    []uint64
	signals    []uint64
	badAuth    int
	refuse     bool              // answer launches 503
	refusal    *api.Error        // when set, answer launches 400 with this body
	mountRoots []string          // reported in registrations (launchfail_test.go)
	dropReply  bool              // accept launches but cut the connection instead of answering
	forget     bool              // do not keep launched jobs (as if the launch never arrived)
	holdLaunch chan struct{}     // when set, launches wait for it to close
	holdSignal chan struct{}     // when set, job stops (/v1/signal) wait for it to close
	gpus       []api.GPU         // reported in registrations (gpus_test.go)
	perGPU     int               // its --fgpu-per-gpu in hundredths; 0: unset
	output     map[uint64]string // a job's stdout, as GET /v1/output reads it (dashboard_logs_test.go)

	stepKills []api.StepCancelRequest // step cancels received (steps_test.go)
	// stepTasks answer a step's live figures; nil: the node does not answer.
	stepTasks []api.TaskStats
	steps     []api.NodeStep // what GET /v1/steps answers
	stepLists int            // GET /v1/steps asked

	delivered     []api.NodeSignalRequest  // signals to deliver received (jobsignal_test.go)
	freezes       []api.NodeSuspendRequest // suspends and resumes received (suspend_test.go)
	refuseSuspend bool                     // answer suspends 500
	// stepLaunch, when set, serves srun's POST /v1/steps, which the step
	// credential authorizes rather than a signature (webterminal_test.go).
	stepLaunch func(api.StepLaunch) error
}

func newFakeNode(tc *testCluster, name string, cpus int, mem int64) *fakeNode {
	f := &fakeNode{t: tc.t, name: name, cpus: cpus, mem: mem, key: tc.srv.key,
		launched: make(chan api.LaunchRequest, 1000)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	tc.t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.badAuth > 0 {
			tc.t.Errorf("node %s got %d requests from ctld without a valid signature", name, f.badAuth)
		}
	})
	f.tc = tc
	return f
}

// ctld is a signed client for the controller's current node-plane URL
// (it changes when the controller restarts).
func (f *fakeNode) ctld() *api.NodeClient {
	if f.tc.srv.tls.client != nil { // a TLS controller (tls_test.go): pin its CA
		return api.NewNodeClientTLS(f.tc.srv.NodeURL(), f.key, 5*time.Second, f.tc.srv.tls.client)
	}
	return api.NewNodeClient(f.tc.srv.NodeURL(), f.key, 5*time.Second)
}

func (f *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	stepLaunch := f.stepLaunch
	f.mu.Unlock()
	if r.URL.Path == "/v1/steps" && r.Method == http.MethodPost && stepLaunch != nil {
		var l api.StepLaunch
		if err := json.Unmarshal(body, &l); err != nil || stepLaunch(l) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Write([]byte("{}"))
		return
	}
	if err := api.Verify(r, f.key, body, time.Now()); err != nil {
		f.mu.Lock()
		f.badAuth++
		f.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/launch":
		var req api.LaunchRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		refuse, hold, refusal := f.refuse, f.holdLaunch, f.refusal
		f.mu.Unlock()
		if hold != nil {
			<-hold
		}
		if refusal != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(refusal)
			return
		}
		if refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(api.Error{Error: "node is draining"})
			return
		}
		f.mu.Lock()
		if !f.forget {
			f.running = append(f.running, req.JobID)
		}
		drop := f.dropReply
		f.mu.Unlock()
		f.launched <- req
		if drop {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Write([]byte("{}"))
	case "/v1/signal":
		var req api.SignalRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		hold := f.holdSignal
		f.mu.Unlock()
		if hold != nil {
			<-hold
		}
		f.mu.Lock()
		f.signals = append(f.signals, req.JobID)
		f.mu.Unlock()
		w.Write([]byte("{}"))
	case "/v1/jobs":
		f.mu.Lock()
		ids := append([]uint64{}, f.running...)
		f.mu.Unlock()
		json.NewEncoder(w).Encode(ids)
	case stepCancelPath:
		var req api.StepCancelRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		f.stepKills = append(f.stepKills, req)
		f.mu.Unlock()
		w.Write([]byte("{}"))
	case nodeSignalPath:
		var req api.NodeSignalRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		f.delivered = append(f.delivered, req)
		f.mu.Unlock()
		w.Write([]byte("{}"))
	case stepStatsPath:
		f.mu.Lock()
		tasks := f.stepTasks
		f.mu.Unlock()
		if tasks == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(tasks)
	case nodeSuspend:
		var req api.NodeSuspendRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		refuse := f.refuseSuspend && req.Suspend
		if !refuse {
			f.freezes = append(f.freezes, req)
		}
		f.mu.Unlock()
		if refuse {
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(api.Error{Error: "the kernel did not finish"})
			return
		}
		w.Write([]byte("{}"))
	case "/v1/output":
		var req api.OutputRequest
		json.Unmarshal(body, &req)
		f.mu.Lock()
		out, ok := f.output[req.Launch.JobID]
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(api.Error{Error: "no output"})
			return
		}
		chunk := api.OutputChunk{Offset: req.Offset, Next: req.Offset, Size: int64(len(out))}
		if req.Offset < chunk.Size {
			chunk.Data = []byte(out[req.Offset:])
			chunk.Next = chunk.Size
		}
		json.NewEncoder(w).Encode(chunk)
	case nodeStepsPath:
		f.mu.Lock()
		known := append([]api.NodeStep{}, f.steps...)
		f.stepLists++
		f.mu.Unlock()
		json.NewEncoder(w).Encode(known)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakeNode) addr() string {
	return strings.TrimPrefix(strings.TrimPrefix(f.srv.URL, "http://"), "https://")
}

// register sends a registration (heartbeat) listing the jobs it runs.
func (f *fakeNode) register() api.RegisterResponse {
	f.t.Helper()
	f.mu.Lock()
	running := slices.Clone(f.running)
	gpus, perGPU, roots := f.gpus, f.perGPU, f.mountRoots
	f.mu.Unlock()
	var resp api.RegisterResponse
	req := api.RegisterRequest{Name: f.name, Addr: f.addr(), CPUs: f.cpus, MemBytes: f.mem, Running: running, BootID: "boot-" + f.name,
		GPUs: gpus, FGPUPerGPUHundredths: perGPU, MountRoots: roots}
	if err := f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/register", req, &resp); err != nil {
		f.t.Fatalf("register %s: %v", f.name, err)
	}
	return resp
}

// waitLaunch returns the next launch the node received.
func (f *fakeNode) waitLaunch() api.LaunchRequest {
	f.t.Helper()
	select {
	case l := <-f.launched:
		return l
	case <-time.After(10 * time.Second):
		f.t.Fatalf("node %s: no launch arrived", f.name)
		return api.LaunchRequest{}
	}
}

// noLaunch checks that no launch is waiting.
func (f *fakeNode) noLaunch() {
	f.t.Helper()
	select {
	case l := <-f.launched:
		f.t.Fatalf("node %s: unexpected launch of job %d", f.name, l.JobID)
	default:
	}
}

// end reports a job's end and forgets it.
func (f *fakeNode) end(id uint64, st api.JobState, exit int) error {
	f.mu.Lock()
	f.running = slices.DeleteFunc(f.running, func(x uint64) bool { return x == id })
	f.mu.Unlock()
	ev := api.JobEvent{JobID: id, Node: f.name, Kind: api.EventEnded, Time: time.Now(), State: st, ExitCode: exit,
		PeakMemBytes: 4096, CPUTimeUsec: 1500}
	return f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil)
}

func (f *fakeNode) signalled() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.signals)
}

func (f *fakeNode) set(fn func(f *fakeNode)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// statusOf returns the HTTP status of an api error (0 for none).
func statusOf(err error) int {
	var se *api.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}
