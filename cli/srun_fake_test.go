package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// fakeStepNode plays a node's endpoint and its step runner: it accepts
// srun's launch and connects back to IOAddr, where play speaks stepio as a
// runner would.
type fakeStepNode struct {
	name  string
	ranks []int
	srv   *httptest.Server
	play  func(t *testing.T, n *fakeStepNode, l api.StepLaunch)
	// refuse, if set, is the error the node answers a launch with.
	refuse string
	// restarted: the grant has the address of the node's previous noded,
	// where nothing listens; GET /v1/nodes has the current one.
	restarted bool

	mu       sync.Mutex
	launches []api.StepLaunch
	signals  []byte
	stdin    []byte
	played   chan struct{} // closed when play returned
}

// fakeStepCluster is a fake ctld answering CreateStep for job 5 with a
// layout over its nodes, and the nodes themselves.
type fakeStepCluster struct {
	socket  string
	nodes   []*fakeStepNode
	grant   api.StepGrant
	refuse  string       // non-empty: CreateStep fails with this message
	busy    int          // CreateStep answers "Requested nodes are busy" this many times first
	ended   api.JobState // non-empty: the step's state in GET /v1/jobs/5/steps (else RUNNING)
	mu      sync.Mutex
	request api.StepRequest
	// An allocation (srun outside one, salloc) is job 5: submitted
	// records its spec; undecided is how many renewals find it pending
	// before the scheduler looked at it (reason None), then pending how
	// many find it waiting for resources; released the releases.
	submitted []api.JobSpec
	undecided int
	pending   int
	released  []api.AllocationRequest
	waits     []int // WaitReadyMs of each look before the grant
	cancels   []api.StepCancelRequest
}

func newFakeStepCluster(t *testing.T, nodes ...*fakeStepNode) *fakeStepCluster {
	t.Helper()
	fc := &fakeStepCluster{socket: filepath.Join(t.TempDir(), "ctld.sock"), nodes: nodes}
	tasks := 0
	for _, n := range nodes {
		n.played = make(chan struct{})
		n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1/steps" {
				http.NotFound(w, r)
				return
			}
			if n.refuse != "" {
				reply(w, 403, api.Error{Error: n.refuse})
				return
			}
			var l api.StepLaunch
			if err := json.NewDecoder(r.Body).Decode(&l); err != nil {
				reply(w, 400, api.Error{Error: err.Error()})
				return
			}
			n.mu.Lock()
			n.launches = append(n.launches, l)
			n.mu.Unlock()
			go func() {
				defer close(n.played)
				n.play(t, n, l)
			}()
			reply(w, 200, map[string]string{})
		}))
		t.Cleanup(n.srv.Close)
		addr := n.srv.URL
		if n.restarted {
			addr = deadAddr(t)
		}
		fc.grant.Layout = append(fc.grant.Layout, api.StepNode{Node: n.name, Addr: addr, Ranks: n.ranks, CPUs: len(n.ranks)})
		tasks += len(n.ranks)
	}
	fc.grant.Step = api.Step{JobID: 5, StepID: 2, State: api.StateRunning, Tasks: tasks}
	fc.grant.Credential = api.StepCredential{JobID: 5, StepID: 2, UID: 1000, GID: 1000, Layout: fc.grant.Layout, Tasks: tasks, Expires: time.Now().Add(time.Hour), Sig: "signed"}

	ln, err := net.Listen("unix", fc.socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs/{id}/steps", func(w http.ResponseWriter, r *http.Request) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		json.NewDecoder(r.Body).Decode(&fc.request)
		switch {
		case fc.busy > 0:
			fc.busy--
			reply(w, 409, api.Error{Error: "Unable to create step for job 5: Requested nodes are busy"})
		case fc.refuse != "":
			reply(w, 409, api.Error{Error: fc.refuse})
		case r.PathValue("id") != "5":
			reply(w, 404, api.Error{Error: "job " + r.PathValue("id") + " does not exist"})
		default:
			reply(w, 200, fc.grant)
		}
	})
	mux.HandleFunc("GET /v1/jobs/5/steps", func(w http.ResponseWriter, r *http.Request) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		st := fc.grant.Step
		st.State = cmp.Or(fc.ended, api.StateRunning)
		reply(w, 200, []api.Step{st})
	})
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		var out []api.Node
		for _, n := range fc.nodes {
			out = append(out, api.Node{Name: n.name, Addr: strings.TrimPrefix(n.srv.URL, "http://"), State: api.NodeAllocated})
		}
		reply(w, 200, out)
	})
	mux.HandleFunc("POST /v1/steps/cancel", func(w http.ResponseWriter, r *http.Request) {
		var req api.StepCancelRequest
		json.NewDecoder(r.Body).Decode(&req)
		fc.mu.Lock()
		defer fc.mu.Unlock()
		fc.cancels = append(fc.cancels, req)
		reply(w, 200, fc.grant.Step)
	})
	mux.HandleFunc("POST /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		var req api.SubmitRequest
		json.NewDecoder(r.Body).Decode(&req)
		fc.mu.Lock()
		defer fc.mu.Unlock()
		fc.submitted = append(fc.submitted, req.Spec)
		reply(w, 200, api.SubmitResponse{JobID: 5})
	})
	mux.HandleFunc("POST /v1/jobs/{id}/allocation", func(w http.ResponseWriter, r *http.Request) {
		var req api.AllocationRequest
		json.NewDecoder(r.Body).Decode(&req)
		fc.mu.Lock()
		defer fc.mu.Unlock()
		a := api.Allocation{JobID: 5, State: api.StateRunning, Ready: true, CPUs: 4, Renew: 3}
		for _, n := range fc.nodes {
			a.Nodes = append(a.Nodes, n.name)
		}
		switch {
		case req.Release:
			fc.released = append(fc.released, req)
			a.Ready = false
		case fc.undecided > 0:
			fc.waits = append(fc.waits, req.WaitReadyMs)
			fc.undecided--
			a = api.Allocation{JobID: 5, State: api.StatePending, Reason: api.ReasonNone, Renew: 3}
		case fc.pending > 0:
			fc.waits = append(fc.waits, req.WaitReadyMs)
			fc.pending--
			a = api.Allocation{JobID: 5, State: api.StatePending, Reason: api.ReasonResources, Renew: 3}
		}
		reply(w, 200, a)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return fc
}

// deadAddr is a node plane URL where nothing listens.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// srun runs srun against the fake with stdin and the given environment
// and returns its exit status, stdout and stderr.
func (fc *fakeStepCluster) srun(t *testing.T, stdin string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := srunEnv{
		stdin:   bytes.NewBufferString(stdin),
		stdout:  &stdout,
		stderr:  &stderr,
		getenv:  func(k string) string { return env[k] },
		environ: func() []string { return []string{"FROM_SRUN=1"} },
		client:  func() *api.Client { return api.NewClient(fc.socket) },
	}
	code := runSrun(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

// runnerConn is the fake runner's side of the I/O connection.
type runnerConn struct {
	c net.Conn
	w *stepio.Writer
}

// dial connects to srun as a runner and says hello with token.
func dial(t *testing.T, l api.StepLaunch, token, node string) *runnerConn {
	t.Helper()
	c, err := net.Dial("tcp", l.IOAddr)
	if err != nil {
		t.Errorf("dial %s: %v", l.IOAddr, err)
		return nil
	}
	rc := &runnerConn{c: c, w: stepio.NewWriter(c)}
	rc.send(t, stepio.HelloFrame(token, node))
	return rc
}

func (rc *runnerConn) send(t *testing.T, f stepio.Frame) {
	if err := rc.w.Write(f); err != nil {
		t.Errorf("runner write: %v", err)
	}
}

func (rc *runnerConn) out(t *testing.T, rank int, s string) {
	rc.send(t, stepio.Frame{Kind: stepio.Stdout, Task: uint32(rank), Payload: []byte(s)})
}

func (rc *runnerConn) exit(t *testing.T, rank int, st stepio.ExitStatus) {
	rc.send(t, stepio.ExitFrame(uint32(rank), st))
}

// finish sends Done and waits for srun to close the connection.
func (rc *runnerConn) finish(t *testing.T) {
	rc.send(t, stepio.Frame{Kind: stepio.Done, Task: stepio.AllTasks})
	for {
		if _, err := stepio.Read(rc.c); err != nil {
			break
		}
	}
	rc.c.Close()
}

// readUntil reads srun's frames to the runner, recording Stdin and
// Signal, until stop says so or the connection ends.
func (n *fakeStepNode) readUntil(rc *runnerConn, stop func(stepio.Frame) bool) {
	for {
		f, err := stepio.Read(rc.c)
		if err != nil {
			return
		}
		n.mu.Lock()
		switch f.Kind {
		case stepio.Signal:
			n.signals = append(n.signals, f.Payload...)
		case stepio.Stdin:
			n.stdin = append(n.stdin, f.Payload...)
		}
		n.mu.Unlock()
		if stop(f) {
			return
		}
	}
}

func rankLine(rank int, s string) string { return "rank " + strconv.Itoa(rank) + " " + s }
