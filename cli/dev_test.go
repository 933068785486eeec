package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// fakeDaemonEnv makes the test binary act as corral-ctld or corral-noded,
// so `corral dev` can be tested with the real flag contract and real
// processes but without the real daemons.
const fakeDaemonEnv = "CORRAL_TEST_FAKE_DAEMON"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeDaemonEnv) {
	case "ctld":
		os.Exit(fakeCtldMain(os.Args[1:]))
	case "noded":
		os.Exit(fakeNodedMain(os.Args[1:]))
	}
	for _, v := range jobspec.EnvVariables() {
		os.Unsetenv(v[0]) // submit reads SBATCH_* variables: keep the caller's out
	}
	os.Exit(m.Run())
}

// fakeCtldMain accepts corral-ctld's flags, writes ctld.addr, takes signed
// registrations and lists the registered nodes on the user socket.
func fakeCtldMain(args []string) int {
	term := notifyTERM()
	fs := flag.NewFlagSet("corral-ctld", flag.ContinueOnError)
	state := fs.String("state", "", "")
	socket := fs.String("socket", "", "")
	listen := fs.String("listen", "", "")
	keyPath := fs.String("key", "", "")
	fs.String("config", "", "")
	if err := fs.Parse(args); err != nil || *state == "" || *socket == "" || *listen == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "fake ctld: bad arguments", args)
		return 2
	}
	key, err := api.LoadKey(*keyPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake ctld:", err)
		return 1
	}
	var mu sync.Mutex
	var nodes []api.Node
	nodePlane := http.NewServeMux()
	nodePlane.HandleFunc("POST /v1/node/register", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := api.Verify(r, key, body, time.Now()); err != nil {
			reply(w, 401, api.Error{Error: err.Error()})
			return
		}
		var req api.RegisterRequest
		if err := json.Unmarshal(body, &req); err != nil {
			reply(w, 400, api.Error{Error: err.Error()})
			return
		}
		mu.Lock()
		nodes = append(nodes, api.Node{Name: req.Name, Addr: req.Addr, State: api.NodeIdle, CPUs: req.CPUs,
			MemBytes: req.MemBytes, Partitions: []string{"batch"}})
		mu.Unlock()
		reply(w, 200, api.RegisterResponse{HeartbeatInterval: 1000})
	})
	tcp, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake ctld:", err)
		return 1
	}
	go http.Serve(tcp, nodePlane)
	if err := os.MkdirAll(*state, 0o755); err != nil {
		return 1
	}
	if err := os.WriteFile(filepath.Join(*state, "ctld.addr"), []byte("http://"+tcp.Addr().String()+"\n"), 0o644); err != nil {
		return 1
	}
	userPlane := http.NewServeMux()
	userPlane.HandleFunc("GET /v1/ping", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, map[string]any{"uid": 0}) })
	userPlane.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reply(w, 200, nodes)
	})
	unix, err := net.Listen("unix", *socket)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake ctld:", err)
		return 1
	}
	go http.Serve(unix, userPlane)
	fmt.Fprintln(os.Stderr, "fake ctld: serving")
	return awaitSIGTERM(term, *state, func() { unix.Close() })
}

// fakeNodedMain accepts corral-noded's flags and registers once.
func fakeNodedMain(args []string) int {
	term := notifyTERM()
	fs := flag.NewFlagSet("corral-noded", flag.ContinueOnError)
	name := fs.String("name", "", "")
	ctld := fs.String("ctld", "", "")
	fs.String("listen", "", "")
	keyPath := fs.String("key", "", "")
	state := fs.String("state", "", "")
	cpus := fs.Int("cpus", 1, "")
	mem := fs.String("mem", "1G", "")
	killWait := fs.Duration("kill-wait", 30*time.Second, "")
	fs.String("ca", "", "")
	fs.String("cred-socket", "", "")
	var gpuArgs []string
	for _, f := range []string{"gpu-mock", "gpu-mock-count", "gpu-mock-mig", "fgpu-per-gpu", "mps-control", "mps-dir"} {
		fs.Func(f, "", func(v string) error { gpuArgs = append(gpuArgs, "--"+f+"="+v); return nil })
	}
	if err := fs.Parse(args); err != nil || *name == "" || *ctld == "" || *state == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "fake noded: bad arguments", args)
		return 2
	}
	if os.Getenv("FAKE_NODED_FAIL") == *name {
		// Fail only once the other node is up (FAKE_NODED_FAIL_AFTER is
		// its state marker): stopping a fake still in its Go runtime's
		// start, before main catches SIGTERM, would kill it without the
		// mark the test looks for, however politely it was asked.
		if after := os.Getenv("FAKE_NODED_FAIL_AFTER"); after != "" {
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(after); err == nil {
					break
				}
			}
		}
		fmt.Fprintln(os.Stderr, "fake noded: failing on purpose")
		return 3
	}
	if *killWait != 2*time.Second {
		fmt.Fprintln(os.Stderr, "fake noded: --kill-wait is", *killWait)
		return 2
	}
	key, err := api.LoadKey(*keyPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake noded:", err)
		return 1
	}
	memBytes, err := jobspec.ParseSize(*mem)
	if err != nil {
		return 2
	}
	nc := api.NewNodeClient(*ctld, key, 5*time.Second)
	req := api.RegisterRequest{Name: *name, Addr: "127.0.0.1:1", CPUs: *cpus, MemBytes: memBytes}
	if err := nc.Do(context.Background(), http.MethodPost, "/v1/node/register", req, &api.RegisterResponse{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake noded:", err)
		return 1
	}
	if err := os.MkdirAll(*state, 0o755); err != nil {
		return 1
	}
	// Written whole, then renamed: the test polls for the file and must
	// never read it half written.
	tmp := filepath.Join(*state, ".gpu-args")
	if err := os.WriteFile(tmp, []byte(strings.Join(gpuArgs, " ")), 0o644); err != nil {
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(*state, "gpu-args")); err != nil {
		return 1
	}
	return awaitSIGTERM(term, *state, nil)
}

// notifyTERM catches SIGTERM from the fake daemon's first line: corral
// dev may stop a daemon that is still starting (another one failed), and
// an uncaught SIGTERM would kill it without the mark the test looks for.
func notifyTERM() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	return ch
}

// awaitSIGTERM blocks until SIGTERM arrives on term, then leaves a mark in
// dir so the test can tell the process was stopped politely.
func awaitSIGTERM(term <-chan os.Signal, dir string, cleanup func()) int {
	<-term
	if cleanup != nil {
		cleanup()
	}
	os.WriteFile(filepath.Join(dir, "stopped-by-sigterm"), nil, 0o644)
	return 0
}

// syncBuffer is a bytes.Buffer safe to read while `corral dev` writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// devRun is a `corral dev` running in the background of a test.
type devRun struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
}

// MustFakeDaemons writes corral-ctld and corral-noded wrappers that run
// this test binary as the fakes, and returns the dev options naming them.
func MustFakeDaemons(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var flags []string
	for _, role := range []string{"ctld", "noded"} {
		p := filepath.Join(dir, "corral-"+role)
		script := fmt.Sprintf("#!/bin/sh\n%s=%s exec '%s' \"$@\"\n", fakeDaemonEnv, role, self)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "--"+role+"-bin", p)
	}
	return flags
}

func startDev(args ...string) *devRun {
	ctx, cancel := context.WithCancel(context.Background())
	d := &devRun{cancel: cancel, done: make(chan int, 1)}
	app := App()
	app.Writer, app.ErrWriter = &d.stdout, &d.stderr
	go func() { d.done <- Run(ctx, app, append([]string{"corral", "dev"}, args...)) }()
	return d
}

// wait returns dev's exit status, failing the test if it takes too long.
func (d *devRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-d.done:
		return code
	case <-time.After(30 * time.Second):
		d.cancel()
		t.Fatalf("corral dev did not finish; stderr:\n%s", d.stderr.String())
		return -1
	}
}

func TestDevStartsAndStopsCluster(t *testing.T) {
	state := filepath.Join(t.TempDir(), "st")
	sock := filepath.Join(state, "ctld.sock")
	d := startDev(append(MustFakeDaemons(t), "--state", state, "--nodes", "2", "--cpus", "3", "--mem", "2G")...)
	defer d.cancel()

	want := "corral dev cluster ready: socket " + sock + "\nexport CORRAL_SOCKET=" + sock + "\n"
	deadline := time.Now().Add(20 * time.Second)
	for d.stdout.String() != want {
		select {
		case code := <-d.done:
			t.Fatalf("corral dev exited %d before ready; stderr:\n%s", code, d.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready; stdout %q, stderr:\n%s", d.stdout.String(), d.stderr.String())
		}
	}

	// The cluster answers the CLI: both nodes registered with the sizes
	// dev passed through.
	r := runCLI("", "--socket", sock, "nodes")
	if r.code != 0 || !contains(r.stdout, "dev1  idle   0/3        0/2.0G", "dev2  idle   0/3        0/2.0G") {
		t.Errorf("corral nodes: %+v", r)
	}

	d.cancel() // as SIGINT would
	if code := d.wait(t); code != 0 {
		t.Errorf("exit %d after interrupt; stderr:\n%s", code, d.stderr.String())
	}
	for _, p := range []string{"ctld/stopped-by-sigterm", "noded/dev1/stopped-by-sigterm", "noded/dev2/stopped-by-sigterm",
		"logs/ctld.log", "logs/dev1.log", "logs/dev2.log", "cluster.key"} {
		if _, err := os.Stat(filepath.Join(state, p)); err != nil {
			t.Errorf("after stop: %v", err)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(state, "logs/ctld.log")); !strings.Contains(string(log), "fake ctld: serving") {
		t.Errorf("ctld log does not hold ctld's output: %q", log)
	}
}

func TestDevChildFailure(t *testing.T) {
	t.Setenv("FAKE_NODED_FAIL", "dev2")
	state := filepath.Join(t.TempDir(), "st")
	t.Setenv("FAKE_NODED_FAIL_AFTER", filepath.Join(state, "noded", "dev1", "gpu-args"))
	d := startDev(append(MustFakeDaemons(t), "--state", state, "--nodes", "2")...)
	defer d.cancel()
	code := d.wait(t)
	want := "corral dev: corral-noded dev2 exited unexpectedly (exit status 3); see " + filepath.Join(state, "logs", "dev2.log") + "\n"
	if code != 1 || d.stderr.String() != want || d.stdout.String() != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, %q", code, d.stdout.String(), d.stderr.String(), want)
	}
	// Whatever had started was stopped politely.
	for _, p := range []string{"ctld/stopped-by-sigterm", "noded/dev1/stopped-by-sigterm"} {
		if _, err := os.Stat(filepath.Join(state, p)); err != nil {
			t.Errorf("not stopped: %v", err)
		}
	}
}

func TestDevRefusals(t *testing.T) {
	fakes := MustFakeDaemons(t)
	busy := MustFakeCtld(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where a default state directory would go
	long := filepath.Join(tmp, strings.Repeat("x", 110-len(tmp)))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--socket", busy.socket}, 1, "corral dev: a controller already answers at " + busy.socket + ": stop it or give another --socket"},
		{[]string{"--ctld-bin", "/nonexistent/corral-ctld"}, 2, "corral dev: --ctld-bin /nonexistent/corral-ctld: not an executable file"},
		{[]string{"--state", long}, 2, "corral dev: socket path " + long +
			"/ctld.sock is too long for a Unix socket (121 bytes, at most 107): use a shorter --state or --socket"},
	} {
		d := startDev(append(append([]string{}, fakes...), tc.args...)...)
		code := d.wait(t)
		if code != tc.code || d.stderr.String() != tc.want+"\n" {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.args, code, d.stderr.String(), tc.code, tc.want)
		}
	}
	// A refused start creates nothing.
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("refused starts left %d entries in the temp dir", len(left))
	}
}
