package noded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

var (
	initPath string
	jobIDs   atomic.Uint64
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		os.Exit(shim.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == fakeShimArg {
		os.Exit(fakeShimMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == childNodedArg {
		os.Exit(childNoded())
	}
	containertest.DispatchInit()
	code := func() int {
		if os.Geteuid() == 0 {
			p, cleanup, err := containertest.BuildInit()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer cleanup()
			initPath = p
		}
		return m.Run()
	}()
	os.Exit(code)
}

func formatUint(n uint64) string { return strconv.FormatUint(n, 10) }

var testKey = []byte("0123456789abcdef0123456789abcdef")

// node is a Daemon under test with its fake ctld and a client for its plane.
type node struct {
	d      *Daemon
	ctld   *nodedtest.FakeCtld
	client *api.NodeClient
	work   string
	stop   func()
}

// mustNode starts a noded (2 CPUs, 300ms kill wait) against ctld, with
// state in stateDir ("" for a fresh one); opts change its config.
func mustNode(t testing.TB, ctld *nodedtest.FakeCtld, stateDir string, opts ...func(*Config)) *node {
	t.Helper()
	containertest.MustRoot(t)
	if stateDir == "" {
		stateDir = containertest.MustStateDir(t)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Name: "tn" + strconv.Itoa(os.Getpid()), CtldURL: ctld.URL(), Listen: "127.0.0.1:0", Key: testKey,
		StateDir: stateDir, CPUs: 2, MemBytes: 1 << 30, KillWait: 300 * time.Millisecond,
		InitPath: initPath, ShimCommand: []string{exe, "shim"},
	}
	for _, o := range opts {
		o(&cfg)
	}
	var logs bytes.Buffer
	d, err := New(cfg, log.New(&lockedWriter{w: &logs}, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		// Every test's jobs have ended by now; their supervisors finish
		// before the test's directories go.
		d.supervisors.Wait()
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("noded log:\n%s", logs.String())
		}
	})
	return &node{
		d: d, ctld: ctld, stop: stop,
		client: api.NewNodeClient("http://"+d.Addr(), testKey, 10*time.Second),
		work:   containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody),
	}
}

// lockedWriter serialises log writes from the daemon's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// launchReq is a 1-CPU job of nobody's running script in the node's work dir.
func (n *node) launchReq(script string) api.LaunchRequest {
	id := jobIDs.Add(1)
	return api.LaunchRequest{
		JobID: id, Name: "j" + formatUint(id), Partition: "p", User: "nobody",
		UID: containertest.Nobody, GID: containertest.Nobody, Home: n.work, Script: script, WorkDir: n.work,
		Env: []string{"PATH=/usr/bin:/bin"}, CPUs: 1, MemBytes: 128 << 20, NodeList: []string{n.d.Name()},
		Start: time.Now(),
	}
}

func (n *node) launch(t testing.TB, req api.LaunchRequest) {
	t.Helper()
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", req, nil); err != nil {
		t.Fatalf("launch of job %d: %v", req.JobID, err)
	}
}

func (n *node) jobs(t *testing.T) []uint64 {
	t.Helper()
	var ids []uint64
	if err := n.client.Do(context.Background(), http.MethodGet, "/v1/jobs", nil, &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestRegisterAndHeartbeat(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	ctld.WaitFor("three heartbeats", func(f *nodedtest.FakeCtld) bool { return len(f.Registers) >= 3 })
	ctld.Lock()
	r := ctld.Registers[0]
	boot := ctld.Registers[2].BootID
	ctld.Unlock()
	if r.Name != n.d.Name() || r.Addr != n.d.Addr() || r.CPUs != 2 || r.MemBytes != 1<<30 || r.BootID == "" || boot != r.BootID {
		t.Errorf("registration %+v", r)
	}
	if !strings.HasPrefix(r.Addr, "127.0.0.1:") || strings.HasSuffix(r.Addr, ":0") {
		t.Errorf("advertised %q, want the real port of 127.0.0.1:0", r.Addr)
	}
	select {
	case <-n.d.Registered():
	default:
		t.Error("Registered not closed after a successful register")
	}
}

// TestBadSignatures: unsigned, wrongly keyed and stale requests get 401 and
// change nothing.
func TestBadSignatures(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("echo never\n")
	body := []byte(fmt.Sprintf(`{"job_id":%d,"name":"x","partition":"p","user":"nobody","uid":65534,"gid":65534,"home":"/","script":"echo never","work_dir":%q,"cpus":1,"mem_bytes":1000000,"shm_bytes":0,"time_limit_s":0,"output":"","error":"","node_list":null}`, req.JobID, n.work))
	tests := []struct {
		name string
		sign func(*http.Request)
	}{
		{"unsigned", func(*http.Request) {}},
		{"wrong key", func(r *http.Request) { api.Sign(r, []byte("another key of 16+ bytes"), body, time.Now()) }},
		{"stale", func(r *http.Request) { api.Sign(r, testKey, body, time.Now().Add(-time.Hour)) }},
		{"signature of another body", func(r *http.Request) { api.Sign(r, testKey, []byte("{}"), time.Now()) }},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest(http.MethodPost, "http://"+n.d.Addr()+"/v1/launch", bytes.NewReader(body))
		tc.sign(r)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d (%s), want 401", tc.name, resp.StatusCode, msg)
		}
	}
	if ids := n.jobs(t); len(ids) != 0 {
		t.Errorf("jobs after rejected launches: %v", ids)
	}
	if ents, _ := os.ReadDir(filepath.Join(n.d.StateDir(), "jobs")); len(ents) != 0 {
		t.Errorf("job directories after rejected launches: %d", len(ents))
	}
	ctld.Lock()
	defer ctld.Unlock()
	if ctld.BadSignatures != 0 {
		t.Errorf("noded sent %d badly signed requests to ctld", ctld.BadSignatures)
	}
}

func TestLaunchReportsStartAndEnd(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("echo hello from $CORRAL_JOB_ID\n")
	n.launch(t, req)
	n.launch(t, req) // repeated launch: accepted, does nothing
	ev := ctld.Ended(req.JobID)
	if ev.State != api.StateCompleted || ev.ExitCode != 0 || ev.Node != n.d.Name() || ev.PeakMemBytes <= 0 {
		t.Errorf("ended event %+v", ev)
	}
	if got := ctld.Kinds(req.JobID); !reflect.DeepEqual(got, []api.JobEventKind{api.EventStarted, api.EventEnded}) {
		t.Errorf("events %v, want exactly started then ended", got)
	}
	out := filepath.Join(n.work, fmt.Sprintf("corral-%d.out", req.JobID))
	if got, _ := os.ReadFile(out); string(got) != fmt.Sprintf("hello from %d\n", req.JobID) {
		t.Errorf("output %q", got)
	}
	waitNothingListed(ctld)
	// The end is acknowledged: a repeat of the launch now (its answer was
	// lost, and the controller could not see the ended job) reports the
	// same end again and runs nothing.
	n.launch(t, req)
	ctld.WaitFor("the end reported again", func(f *nodedtest.FakeCtld) bool { return len(f.KindsLocked(req.JobID)) == 3 })
	if got := ctld.Kinds(req.JobID); !reflect.DeepEqual(got, []api.JobEventKind{api.EventStarted, api.EventEnded, api.EventEnded}) {
		t.Errorf("events after a repeated launch %v: the run ran again", got)
	}
	if again := ctld.LastEnded(req.JobID); again.ExitCode != ev.ExitCode || again.State != ev.State || !again.Time.Equal(ev.Time) {
		t.Errorf("end reported again %+v, want the first %+v", again, ev)
	}
	if got, _ := os.ReadFile(out); string(got) != fmt.Sprintf("hello from %d\n", req.JobID) {
		t.Errorf("output after a repeated launch %q: the run ran again", got)
	}
	mustNoJobDirs(t, n)
}

// TestLaunchOfANewRunAfterTheEnd: a launch of the same job with a new
// start (a retry after a failed launch, a requeue) is a new run and runs.
func TestLaunchOfANewRunAfterTheEnd(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("echo run >> runs-$CORRAL_JOB_ID\n")
	n.launch(t, req)
	ctld.Ended(req.JobID)
	waitNothingListed(ctld)
	req.Start = req.Start.Add(time.Second)
	n.launch(t, req)
	ctld.WaitFor("the second run's end", func(f *nodedtest.FakeCtld) bool { return len(f.KindsLocked(req.JobID)) == 4 })
	if got := ctld.Kinds(req.JobID); !reflect.DeepEqual(got, []api.JobEventKind{api.EventStarted, api.EventEnded, api.EventStarted, api.EventEnded}) {
		t.Errorf("events %v, want two runs", got)
	}
	if got, _ := os.ReadFile(filepath.Join(n.work, fmt.Sprintf("runs-%d", req.JobID))); string(got) != "run\nrun\n" {
		t.Errorf("the job's runs wrote %q, want two lines", got)
	}
	mustNoJobDirs(t, n)
}

// waitNothingListed waits for a heartbeat that lists no job: every run
// ended and its end was acknowledged.
func waitNothingListed(ctld *nodedtest.FakeCtld) {
	ctld.WaitFor("a heartbeat without the job", func(f *nodedtest.FakeCtld) bool {
		return len(f.Registers) > 0 && len(f.Registers[len(f.Registers)-1].Running) == 0
	})
}

func mustNoJobDirs(t *testing.T, n *node) {
	t.Helper()
	ok := containertest.Eventually(5*time.Second, func() bool {
		ents, _ := os.ReadDir(filepath.Join(n.d.StateDir(), "jobs"))
		return len(ents) == 0
	})
	if !ok {
		t.Error("job directories left behind")
	}
	// A job process orphaned by a killed shim is reaped by PID 1, not
	// by noded: give it a moment.
	var leaks []string
	containertest.Eventually(5*time.Second, func() bool {
		leaks = containertest.Leaks(nil, []string{n.d.StateDir(), n.work}, "corral-"+CgroupScope(n.d.Name(), n.d.StateDir())+"-job")
		return len(leaks) == 0
	})
	if len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}

func TestSignalCancels(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("sleep 100\n")
	n.launch(t, req)
	ctld.Started(req.JobID)
	if ids := n.jobs(t); !reflect.DeepEqual(ids, []uint64{req.JobID}) {
		t.Errorf("GET /v1/jobs = %v while the job runs", ids)
	}
	for i := 0; i < 2; i++ { // idempotent
		if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: req.JobID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: 999999}, nil); err != nil {
		t.Errorf("signal of an unknown job: %v, want 200", err)
	}
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCancelled {
		t.Errorf("ended %+v, want CANCELLED", ev)
	}
	mustNoJobDirs(t, n)
}

// TestKillFromHeartbeat: a job ctld lists in RegisterResponse.Kill ends.
func TestKillFromHeartbeat(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("sleep 100\n")
	n.launch(t, req)
	ctld.WaitFor("a heartbeat listing the job", func(f *nodedtest.FakeCtld) bool {
		if len(f.Registers) == 0 {
			return false // the first registration has not arrived yet
		}
		last := f.Registers[len(f.Registers)-1]
		return len(last.Running) == 1 && last.Running[0] == req.JobID
	})
	ctld.SetKill(req.JobID)
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCancelled {
		t.Errorf("ended %+v, want CANCELLED", ev)
	}
}

func TestLaunchRefusalsAndJobFailures(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	status := func(err error) int {
		var se *api.StatusError
		if errors.As(err, &se) {
			return se.Code
		}
		return 0
	}
	big := n.launchReq("sleep 100\n")
	big.CPUs = 2
	n.launch(t, big)
	refusals := []struct {
		name string
		edit func(*api.LaunchRequest)
		code int
	}{
		{"no free CPUs", func(r *api.LaunchRequest) {}, http.StatusConflict},
		{"more CPUs than the node", func(r *api.LaunchRequest) { r.CPUs = 3 }, http.StatusBadRequest},
		{"relative work dir", func(r *api.LaunchRequest) { r.WorkDir = "work" }, http.StatusBadRequest},
		{"no memory", func(r *api.LaunchRequest) { r.MemBytes = 0 }, http.StatusBadRequest},
		{"empty script", func(r *api.LaunchRequest) { r.Script = "" }, http.StatusBadRequest},
	}
	for _, tc := range refusals {
		req := n.launchReq("echo x\n")
		tc.edit(&req)
		err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", req, nil)
		if status(err) != tc.code || !strings.Contains(err.Error(), formatUint(req.JobID)) {
			t.Errorf("%s: %v (status %d), want %d naming the job", tc.name, err, status(err), tc.code)
		}
	}
	err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", map[string]any{"job_id": 5, "bogus": 1}, nil)
	if status(err) != http.StatusBadRequest {
		t.Errorf("unknown field: %v, want 400", err)
	}
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: big.JobID}, nil); err != nil {
		t.Fatal(err)
	}
	ctld.Ended(big.JobID)

	// A job whose work directory is gone is accepted and ends FAILED.
	bad := n.launchReq("echo x\n")
	bad.WorkDir = "/nonexistent/dir"
	n.launch(t, bad)
	if ev := ctld.Ended(bad.JobID); ev.State != api.StateFailed || ev.ExitCode != 1 || !strings.Contains(ev.Message, "work directory") {
		t.Errorf("ended %+v, want FAILED with a message about the work directory", ev)
	}
	mustNoJobDirs(t, n)
}

// TestEventsSurviveCtldOutage: with ctld down, ends are queued on disk and
// survive a noded restart; all arrive once ctld is back.
func TestEventsSurviveCtldOutage(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	state := containertest.MustStateDir(t)
	n := mustNode(t, ctld, state)
	<-n.d.Registered()
	ctld.Down()
	a, b := n.launchReq("exit 0\n"), n.launchReq("exit 4\n")
	n.launch(t, a)
	n.launch(t, b)
	queued := func() int {
		ents, _ := os.ReadDir(filepath.Join(state, "events"))
		return len(ents)
	}
	if !containertest.Eventually(20*time.Second, func() bool { return queued() == 4 && len(n.jobs(t)) == 0 }) {
		t.Fatalf("%d events queued on disk, want 4 (two starts, two ends)", queued())
	}
	if got := n.d.Running(); !reflect.DeepEqual(got, []uint64{a.JobID, b.JobID}) {
		t.Errorf("Running = %v, want the unacknowledged ends listed", got)
	}
	n.stop()
	n2 := mustNode(t, ctld, state)
	ctld.Up()
	if ev := ctld.Ended(b.JobID); ev.State != api.StateFailed || ev.ExitCode != 4 {
		t.Errorf("ended %+v", ev)
	}
	ctld.Ended(a.JobID)
	if !containertest.Eventually(10*time.Second, func() bool { return queued() == 0 }) {
		t.Errorf("%d events still queued after delivery", queued())
	}
	_ = n2
}
