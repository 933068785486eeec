package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/noded/shim"
)

// binDir holds the binaries under test.
var binDir string

func TestMain(m *testing.M) {
	for _, v := range jobspec.EnvVariables() {
		os.Unsetenv(v[0]) // corral submit reads SBATCH_* variables: keep the caller's out
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binDir = filepath.Join(root, "bin")
	if under := filepath.Clean(root) + "/"; strings.HasPrefix(under, "/tmp/") {
		// Jobs see the host's files, but /tmp is their own: the binaries
		// and test programs they run from the repository would be missing.
		fmt.Fprintf(os.Stderr, "e2e: the repository is under /tmp (%s), which jobs cannot see (a job's /tmp is private to it): clone it elsewhere\n", root)
		os.Exit(1)
	}
	if os.Geteuid() == 0 {
		if err := buildBinaries(root); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building binaries:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the test directory")
		}
		dir = parent
	}
}

func buildBinaries(root string) error {
	// The tags match the Makefile's: corral-noded gets seccomp support,
	// corral leaves out the docs generators and corral-slurm is the Slurm
	// names alone, so that a test run leaves bin/ as make builds it (the
	// Slurm names' start-up is measured from there).
	for _, b := range []struct{ name, cgo, tags string }{
		{"corral", "0", "urfave_cli_no_docs"}, {"corral-slurm", "0", "slurmonly"}, {"corral-ctld", "1", ""}, {"corral-init", "0", ""}, {"corral-noded", "1", "seccomp"}, {"corral-shim", "1", "seccomp"},
	} {
		cmd := exec.Command("go", "build", "-tags", b.tags, "-o", filepath.Join(root, "bin", b.name), "./cmd/"+b.name)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", b.name, err, out)
		}
	}
	return nil
}

// needRoot skips a test that cannot run without root, saying so.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs containers and creates cgroups")
	}
}

// NodeOpts describes one node daemon of a test cluster.
type NodeOpts struct {
	Name string
	CPUs int
	Mem  string
	Args []string // more corral-noded flags
}

// ClusterOpts describes a test cluster.
type ClusterOpts struct {
	Nodes    []NodeOpts
	KillWait string
	Config   string   // corral.conf contents, optional
	NoNodes  bool     // a controller alone: jobs stay pending
	CtldArgs []string // more corral-ctld flags (--web ADDR, ...)
}

// Cluster is a running ctld with its node daemons, all child processes.
type Cluster struct {
	t       testing.TB
	Dir     string
	Socket  string
	CtldURL string
	listen  string
	ctld    *exec.Cmd
	started bool // ctld answered once: a restart keeps its ports
	nodes   []*exec.Cmd
	opts    ClusterOpts
	Client  *api.Client
	// jobDirs are the job directories asked for after the cluster
	// started: Stop removes them once no job can write there (jobDir).
	jobDirs []string
}

// clusterOf holds each test's last started cluster, for jobDir.
var clusterOf sync.Map // testing.TB -> *Cluster

// StartCluster starts ctld and the node daemons and waits until every node
// is registered. Everything is stopped when the test ends.
func StartCluster(t testing.TB, opts ClusterOpts) *Cluster {
	t.Helper()
	needRoot(t)
	if len(opts.Nodes) == 0 && !opts.NoNodes {
		opts.Nodes = []NodeOpts{{Name: "n1", CPUs: 2, Mem: "2G"}}
	}
	if opts.KillWait == "" {
		opts.KillWait = "1s"
	}
	dir := shortTempDir(t)
	c := &Cluster{t: t, Dir: dir, Socket: filepath.Join(dir, "ctld.sock"), opts: opts}
	c.listen = "127.0.0.1:" + strconv.Itoa(freePort(t))
	c.CtldURL = "https://" + c.listen // always TLS; noded pins ctld/ca.pem beside the key
	c.Client = api.NewClient(c.Socket)
	t.Cleanup(c.Stop)
	clusterOf.Store(t, c)
	c.StartCtld()
	for _, n := range opts.Nodes {
		c.StartNode(n)
	}
	c.WaitNodesUp(len(opts.Nodes), 15*time.Second)
	return c
}

// shortTempDir keeps Unix socket paths well under the 108-byte limit.
func shortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "corral-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// freePort picks a loopback port nothing listens on, for a server the
// test starts later (ctld's, a job's app). It picks outside the kernel's
// ephemeral range: a port inside it, free when picked, may be handed to
// any process's outgoing connection before the server binds it, which
// `make test` once showed as "bind: address already in use" while other
// packages' tests ran beside e2e. The kernel hands out nothing outside
// the range by itself, and this process never picks the same port twice.
func freePort(t testing.TB) int {
	t.Helper()
	lo, hi := portsOutsideEphemeral()
	for try := 0; try < 200 && hi > lo; try++ {
		port := lo + rand.IntN(hi-lo)
		if !claimPort(port) {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // some server has it
		}
		l.Close()
		return port
	}
	// No room outside the range (or none free): the kernel's pick.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var (
	pickedMu sync.Mutex
	picked   = map[int]bool{}
)

// claimPort reports whether port was not picked before, and marks it.
func claimPort(port int) bool {
	pickedMu.Lock()
	defer pickedMu.Unlock()
	if picked[port] {
		return false
	}
	picked[port] = true
	return true
}

// portsOutsideEphemeral is [lo, hi): from 10000 up to the start of
// net.ipv4.ip_local_port_range (32768 on a stock kernel), or else above
// its end; lo == hi when neither leaves a thousand ports.
func portsOutsideEphemeral() (lo, hi int) {
	first, last := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			b, errB := strconv.Atoi(f[1])
			if errA == nil && errB == nil {
				first, last = a, b
			}
		}
	}
	switch {
	case first-10000 >= 1000:
		return 10000, first
	case 65535-last >= 1000:
		return last + 1, 65536
	}
	return 0, 0
}

func (c *Cluster) logFile(name string) *os.File {
	f, err := os.OpenFile(filepath.Join(c.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// StartCtld starts (or restarts) the controller on the same state and port.
func (c *Cluster) StartCtld() {
	c.t.Helper()
	for try := 1; ; try++ {
		err := c.startCtldOnce()
		if err == nil {
			c.started = true
			return
		}
		// freePort's port was free when picked, but the kernel may hand
		// it to any process's connection before ctld binds it: on the
		// first start, pick again (a restart keeps its port, which the
		// nodes know).
		if !c.started && try < 4 && errors.Is(err, errPortTaken) {
			c.t.Logf("ctld start %d: %v; picking other ports", try, err)
			c.repickPorts()
			continue
		}
		c.t.Fatalf("ctld did not answer on %s: %v\n%s", c.Socket, err, c.Logs("ctld"))
	}
}

// errPortTaken: ctld could not bind a port freePort had picked.
var errPortTaken = errors.New("a port picked for ctld was taken before it bound it")

// startCtldOnce starts the controller and waits until it answers.
func (c *Cluster) startCtldOnce() error {
	args := []string{"--state", filepath.Join(c.Dir, "ctld"), "--socket", c.Socket,
		"--listen", c.listen, "--node-timeout", "5s", "--heartbeat", "500ms"}
	if c.opts.Config != "" {
		conf := filepath.Join(c.Dir, "corral.conf")
		if err := os.WriteFile(conf, []byte(c.opts.Config), 0o644); err != nil {
			c.t.Fatal(err)
		}
		args = append(args, "--config", conf)
	}
	args = append(args, c.opts.CtldArgs...)
	cmd := exec.Command(filepath.Join(binDir, "corral-ctld"), args...)
	log := c.logFile("ctld")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logStart, _ := log.Seek(0, io.SeekEnd)
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.ctld = cmd
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Client.Do(ctx, "GET", "/v1/ping", nil, nil)
		cancel()
		if err == nil {
			return nil
		}
		if b, _ := os.ReadFile(log.Name()); int64(len(b)) > logStart && strings.Contains(string(b[logStart:]), "address already in use") {
			_ = cmd.Wait() // it exits on that error
			c.ctld = nil
			return errPortTaken
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// repickPorts gives ctld's node plane, and the dashboard's address when
// it has one (--web), ports freshly picked.
func (c *Cluster) repickPorts() {
	c.listen = "127.0.0.1:" + strconv.Itoa(freePort(c.t))
	c.CtldURL = "https://" + c.listen
	args := slices.Clone(c.opts.CtldArgs)
	for i := range args {
		if args[i] == "--web" && i+1 < len(args) {
			args[i+1] = "127.0.0.1:" + strconv.Itoa(freePort(c.t))
		}
	}
	c.opts.CtldArgs = args
}

// WebAddr is the dashboard's address (--web), as ctld serves it.
func (c *Cluster) WebAddr() string {
	if i := slices.Index(c.opts.CtldArgs, "--web"); i >= 0 && i+1 < len(c.opts.CtldArgs) {
		return c.opts.CtldArgs[i+1]
	}
	return ""
}

// StartNode starts one node daemon.
func (c *Cluster) StartNode(n NodeOpts) {
	c.t.Helper()
	if n.Mem == "" {
		n.Mem = "2G"
	}
	if n.CPUs == 0 {
		n.CPUs = 2
	}
	args := []string{"--name", n.Name, "--ctld", c.CtldURL, "--listen", "127.0.0.1:0",
		"--key", filepath.Join(c.Dir, "ctld", "cluster.key"),
		"--state", filepath.Join(c.Dir, "node-"+n.Name),
		"--cpus", strconv.Itoa(n.CPUs), "--mem", n.Mem, "--kill-wait", c.opts.KillWait,
		"--cred-socket", filepath.Join(c.Dir, "cred-"+n.Name+".sock")}
	args = append(args, n.Args...)
	cmd := exec.Command(filepath.Join(binDir, "corral-noded"), args...)
	log := c.logFile("noded-" + n.Name)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.nodes = append(c.nodes, cmd)
}

// WaitNodesUp waits until n nodes are registered and not DOWN.
func (c *Cluster) WaitNodesUp(n int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		nodes, err := c.Client.Nodes(context.Background())
		up := 0
		for _, nd := range nodes {
			if nd.State != api.NodeDown {
				up++
			}
		}
		if err == nil && up >= n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("only %d of %d nodes up after %s (err %v)\nctld:\n%s", up, n, timeout, err, c.Logs("ctld"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillCtld kills the controller with SIGKILL, as a crash would.
func (c *Cluster) KillCtld() {
	c.t.Helper()
	if c.ctld == nil {
		return
	}
	_ = c.ctld.Process.Signal(syscall.SIGKILL)
	_ = c.ctld.Wait()
	c.ctld = nil
}

// Stop ends every daemon: nodes first, then ctld. A node daemon that
// stops leaves its jobs running under their shims (they survive a noded
// restart), so the jobs still running are cancelled first, while the
// controller and the nodes can still end them.
func (c *Cluster) Stop() {
	c.cancelRunning()
	c.waitShims()
	for _, n := range c.nodes {
		stopProcess(n)
	}
	c.nodes = nil
	if c.ctld != nil {
		stopProcess(c.ctld)
		c.ctld = nil
	}
	clusterOf.CompareAndDelete(c.t, c)
	for _, dir := range c.jobDirs {
		if err := os.RemoveAll(dir); err != nil {
			c.t.Errorf("job directory: %v", err)
		}
	}
	c.jobDirs = nil
	if c.t.Failed() {
		names := []string{"ctld", "noded-n1", "noded-n2"}
		for _, n := range c.opts.Nodes {
			if n.Name != "n1" && n.Name != "n2" {
				names = append(names, "noded-"+n.Name)
			}
		}
		for _, name := range names {
			if l := c.Logs(name); l != "" {
				c.t.Logf("--- %s log ---\n%s", name, l)
			}
		}
	}
}

// cancelRunning cancels every job that may hold a process on a node and
// waits, bounded, for their ends: an interactive session a test left
// running must not outlive its cluster.
func (c *Cluster) cancelRunning() {
	if c.ctld == nil || c.ctld.ProcessState != nil || len(c.nodes) == 0 {
		return
	}
	live := []api.JobState{api.StateRunning, api.StateSuspended}
	cl := api.NewClient(c.Socket)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cl.Cancel(ctx, api.CancelRequest{States: live}); err != nil {
		return // nothing running, or a controller that cannot answer: nothing to wait for
	}
	for ctx.Err() == nil {
		jobs, err := cl.Jobs(ctx, api.JobFilter{States: live})
		if err != nil || len(jobs) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Logf("jobs still running 20 s after the cluster's stop cancelled them")
}

// waitShims waits, bounded, until no job shim lives on a node whose
// daemon runs. ctld ends a job at its first node's report; the kill
// order for its parts on other nodes may still be on its way when
// cancelRunning returns, and a noded stopped before it lands leaves
// that part running under its shim for good (seen: an allocation's
// extern part on n2, after make test).
func (c *Cluster) waitShims() {
	if c.ctld == nil || c.ctld.ProcessState != nil {
		return // no controller to send the orders
	}
	var states []string
	for _, n := range c.nodes {
		if i := slices.Index(n.Args, "--state"); n.ProcessState == nil && i >= 0 && i+1 < len(n.Args) {
			states = append(states, n.Args[i+1])
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		live := liveShims(states)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Errorf("job shims still running 20 s after the cluster's jobs ended: %v", live)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveShims lists the job shims (node state/jobs/ID/shim.pid) still
// running under the given node state directories.
func liveShims(states []string) []string {
	var live []string
	for _, state := range states {
		pids, _ := filepath.Glob(filepath.Join(state, "jobs", "*", shim.PidFile))
		for _, f := range pids {
			pid, _, err := shim.ReadPidFile(f)
			if err != nil {
				continue
			}
			if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmd), "corral-shim") {
				live = append(live, fmt.Sprintf("%s (pid %d)", filepath.Dir(f), pid))
			}
		}
	}
	return live
}

func stopProcess(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Logs returns a daemon's log so far.
func (c *Cluster) Logs(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// Result is what one CLI invocation did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Corral runs bin/corral against this cluster's socket.
func (c *Cluster) Corral(args ...string) Result {
	c.t.Helper()
	return runCorral(c.t, c.Socket, "", args...)
}

func runCorral(t testing.TB, socket, dir string, args ...string) Result {
	t.Helper()
	return runBinary(t, filepath.Join(binDir, "corral"), socket, dir, args...)
}

// runBinary runs the command at path against the controller at socket.
func runBinary(t testing.TB, path, socket, dir string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), api.SocketEnv+"="+socket)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running %s %v: %v", filepath.Base(path), args, err)
		}
		code = ee.ExitCode()
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Submit submits with --parsable and returns the job ID.
func (c *Cluster) Submit(dir string, args ...string) uint64 {
	c.t.Helper()
	r := runCorral(c.t, c.Socket, dir, append([]string{"submit", "--parsable"}, args...)...)
	if r.Code != 0 {
		c.t.Fatalf("submit %v: exit %d: %s", args, r.Code, r.Stderr)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		c.t.Fatalf("submit %v printed %q, not a job ID", args, r.Stdout)
	}
	return id
}

// Job fetches one job.
func (c *Cluster) Job(id uint64) *api.Job {
	c.t.Helper()
	j, err := c.Client.Job(context.Background(), id)
	if err != nil {
		c.t.Fatalf("job %d: %v", id, err)
	}
	return j
}

// WaitJob polls until cond holds for the job or the timeout passes.
func (c *Cluster) WaitJob(id uint64, timeout time.Duration, what string, cond func(*api.Job) bool) *api.Job {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := c.Job(id)
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %d: not %s within %s: state %s reason %s message %q", id, what, timeout, j.State, j.Reason, j.Message)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitState waits for a job to reach a state.
func (c *Cluster) WaitState(id uint64, st api.JobState, timeout time.Duration) *api.Job {
	c.t.Helper()
	return c.WaitJob(id, timeout, string(st), func(j *api.Job) bool { return j.State == st })
}

// WaitEnded waits for a job to reach any terminal state.
func (c *Cluster) WaitEnded(id uint64, timeout time.Duration) *api.Job {
	c.t.Helper()
	return c.WaitJob(id, timeout, "ended", func(j *api.Job) bool { return j.State.Terminal() })
}

// jobDir makes a submit directory any job user can write to.
//
// A directory asked for once the test's cluster runs is removed when the
// cluster stops, after its jobs ended: cleanups run last registered
// first, so a t.TempDir would go before the cluster's Stop, while a job
// the test left behind may still be creating its output file there
// (TestCtldKill9KeepsEveryJob failed so, "directory not empty").
func jobDir(t testing.TB) string {
	t.Helper()
	c, running := clusterOf.Load(t)
	if !running {
		dir := t.TempDir() // removed after any cluster started later stops
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir, err := os.MkdirTemp("", "corral-job-")
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		t.Fatal(err)
	}
	cl := c.(*Cluster)
	cl.jobDirs = append(cl.jobDirs, dir)
	return dir
}

// readLines returns the lines of a file, failing the test if it is missing.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("job output: %v", err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines
}

// TestCtldStartRepicksATakenPort: a port freePort picked can be taken
// before ctld binds it (make test printed FLAKY: e2e for it, "bind:
// address already in use" on --web); the first start picks again.
func TestCtldStartRepicksATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	c := StartCluster(t, ClusterOpts{NoNodes: true, CtldArgs: []string{"--web", taken.Addr().String()}})
	if c.WebAddr() == taken.Addr().String() {
		t.Fatalf("the dashboard kept the taken address %s", c.WebAddr())
	}
	resp, err := http.Get("http://" + c.WebAddr() + "/")
	if err != nil {
		t.Fatalf("the dashboard on %s: %v", c.WebAddr(), err)
	}
	resp.Body.Close()
}

// TestFreePortIsOutsideTheEphemeralRange: the ports the tests give their
// servers are ones the kernel never hands to a connection by itself, and
// never the same twice.
func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skipf("no ip_local_port_range to check against: %v", err)
	}
	var first, last int
	if _, err := fmt.Sscan(string(b), &first, &last); err != nil {
		t.Fatalf("ip_local_port_range %q: %v", b, err)
	}
	if lo, hi := portsOutsideEphemeral(); hi == lo {
		t.Skipf("the ephemeral range %d-%d leaves no room outside it", first, last)
	}
	seen := map[int]bool{}
	for range 50 {
		p := freePort(t)
		if p >= first && p <= last {
			t.Fatalf("freePort gave %d, inside the ephemeral range %d-%d", p, first, last)
		}
		if seen[p] {
			t.Fatalf("freePort gave %d twice", p)
		}
		seen[p] = true
	}
}
