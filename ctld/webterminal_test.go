package ctld

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// terminalRunner plays a node's step runner for the dashboard's terminal
// (the real one runs a shell in the job's container: e2e's
// TestDashboardTerminalInTheContainer): it connects back to the launcher,
// echoes input as output, reports window sizes, and ends as a shell would
// on a hangup or on "exit".
type terminalRunner struct {
	f        *fakeNode
	launches chan api.StepLaunch
	sizes    chan [2]uint16
	hangups  chan int // step IDs hung up
	errs     chan error
	refuse   atomic.Bool // answer launches 400, as a node that cannot start the step
}

func runTerminals(f *fakeNode) *terminalRunner {
	r := &terminalRunner{f: f, launches: make(chan api.StepLaunch, 8), sizes: make(chan [2]uint16, 8),
		hangups: make(chan int, 8), errs: make(chan error, 8)}
	f.set(func(f *fakeNode) {
		f.stepLaunch = func(l api.StepLaunch) error {
			if r.refuse.Load() {
				return errors.New("refused")
			}
			r.launches <- l
			go r.run(l)
			return nil
		}
	})
	return r
}

func (r *terminalRunner) run(l api.StepLaunch) {
	c, err := net.Dial("tcp", l.IOAddr)
	if err != nil {
		r.errs <- err
		return
	}
	defer c.Close()
	w := stepio.NewWriter(c)
	w.Write(stepio.HelloFrame(l.IOToken, r.f.name))
	end := func(st stepio.ExitStatus) {
		w.Write(stepio.ExitFrame(0, st))
		w.Write(stepio.Frame{Kind: stepio.Done, Task: stepio.AllTasks})
		ev := api.JobEvent{JobID: l.Credential.JobID, StepID: l.Credential.StepID, Node: r.f.name, Kind: api.EventStepEnded,
			Time: time.Now(), ExitCode: st.Code, Signal: st.Signal}
		if err := r.f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
			r.errs <- err
		}
	}
	for {
		f, err := stepio.Read(c)
		if err != nil {
			r.errs <- fmt.Errorf("the launcher went away before the step ended: %v", err)
			return
		}
		switch f.Kind {
		case stepio.Stdin:
			if string(f.Payload) == "exit\r" {
				end(stepio.ExitStatus{})
				return
			}
			w.Write(stepio.Frame{Kind: stepio.Stdout, Task: 0, Payload: append([]byte("echo:"), f.Payload...)})
		case stepio.Winsize:
			rows, cols, _ := stepio.DecodeWinsize(f.Payload)
			r.sizes <- [2]uint16{rows, cols}
		case stepio.Signal:
			if syscall.Signal(f.Payload[0]) == syscall.SIGHUP {
				r.hangups <- l.Credential.StepID
				end(stepio.ExitStatus{Code: 129, Signal: int(syscall.SIGHUP)})
				return
			}
		}
	}
}

// terminalCluster is a dashboard controller with one fake node running a
// job of uidOwner's that fills it, and that node's terminal runner.
func terminalCluster(t *testing.T) (*testCluster, *terminalRunner, uint64, string) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	f := newFakeNode(tc, "n1", 4, 8<<30)
	r := runTerminals(f)
	f.register()
	no := false
	id := tc.submitFor(uidOwner, api.JobSpec{Name: "sess", Script: "#!/bin/sh\nsleep 100\n", CPUs: 4, MemBytes: 1 << 30, WorkDir: "/tmp", Requeue: &no})
	if l := f.waitLaunch(); l.JobID != id {
		t.Fatalf("node launched job %d, want %d", l.JobID, id)
	}
	tc.waitJob(id, "running", inState(api.StateRunning))
	return tc, r, id, "http://" + tc.srv.web.Addr()
}

// dialTerminal opens job id's terminal websocket from origin with b's
// cookies; it returns the refusal's status when there is one.
func dialTerminal(t *testing.T, b *browser, id uint64, origin string) (*websocket.Conn, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(b.base, "http") + fmt.Sprintf("/jobs/%d/terminal/ws", id)
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: b.hc, HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		if resp == nil {
			t.Fatalf("terminal of job %d: %v", id, err)
		}
		return nil, resp.StatusCode
	}
	return c, http.StatusSwitchingProtocols
}

// readUntil reads the terminal's output until it holds want.
func readUntil(t *testing.T, c *websocket.Conn, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("terminal output %q, then %v; want %q", got.String(), err, want)
		}
		got.Write(data)
	}
	return got.String()
}

// The terminal opens only for a signed-in user who may run a step in the
// job, from the dashboard's own origin, on a running job; every refusal
// is an HTTP answer and creates no step.
func TestDashboardTerminalRefusals(t *testing.T) {
	tc, r, id, base := terminalCluster(t)
	pending := tc.submitFor(uidOwner, api.JobSpec{Name: "wait", Script: "#!/bin/sh\nsleep 100\n", CPUs: 4, MemBytes: 1 << 30, WorkDir: "/tmp"})
	owner := newBrowser(t, base)
	if _, code := dialTerminal(t, owner, id, base); code != http.StatusUnauthorized {
		t.Errorf("a terminal without signing in: %d, want 401", code)
	}
	signIn(t, tc, owner, uidOwner)
	for _, origin := range []string{"http://evil.example", "null", ""} {
		if _, code := dialTerminal(t, owner, id, origin); code != http.StatusForbidden {
			t.Errorf("a terminal upgrade from origin %q: %d, want 403", origin, code)
		}
	}
	if _, code := dialTerminal(t, owner, pending, base); code != http.StatusConflict {
		t.Errorf("a terminal in a pending job: %d, want 409", code)
	}
	if code, page := owner.get(fmt.Sprintf("/jobs/%d/terminal", pending)); code != http.StatusConflict || !strings.Contains(page, "only in a running session") {
		t.Errorf("the terminal page of a pending job: %d\n%s", code, page)
	}
	other := newBrowser(t, base)
	signIn(t, tc, other, nobody)
	if _, code := dialTerminal(t, other, id, base); code != http.StatusForbidden {
		t.Errorf("another user's terminal: %d, want 403", code)
	}
	if code, _ := other.get(fmt.Sprintf("/jobs/%d/terminal", id)); code != http.StatusForbidden {
		t.Errorf("another user's terminal page: %d, want 403", code)
	}
	if steps := stepsOf(t, tc, id); len(steps) != 0 {
		t.Fatalf("refused terminals created steps: %+v", steps)
	}
	// An admin may, as with srun --jobid: the shell runs as the job's owner.
	admin := newBrowser(t, base)
	signIn(t, tc, admin, uidAdmin)
	c, code := dialTerminal(t, admin, id, base)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("an admin's terminal: %d", code)
	}
	if l := <-r.launches; l.Credential.UID != uidOwner {
		t.Errorf("the admin's terminal runs as uid %d, want the owner's %d", l.Credential.UID, uidOwner)
	}
	c.Close(websocket.StatusNormalClosure, "")
	code, page := owner.get(fmt.Sprintf("/jobs/%d/terminal", id))
	if code != http.StatusOK || !strings.Contains(page, fmt.Sprintf(`id="terminal" data-job-id="%d" data-status="connecting"`, id)) {
		t.Fatalf("the owner's terminal page (%d) lacks its hooks:\n%s", code, page)
	}
	if _, sessions := owner.get("/"); !strings.Contains(sessions, fmt.Sprintf(`href="/jobs/%d/terminal"`, id)) {
		t.Errorf("the running session's row has no terminal action")
	}
}

// The owner's terminal is a --pty step on the job's node: input reaches
// it, its output comes back, window sizes are passed on; closing the
// socket hangs the step up and ends it, and the job runs on. A shell that
// exits closes the socket with its exit status.
func TestDashboardTerminalRelaysAndEndsItsStep(t *testing.T) {
	tc, r, id, base := terminalCluster(t)
	b := newBrowser(t, base)
	signIn(t, tc, b, uidOwner)
	c, code := dialTerminal(t, b, id, base)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("the owner's terminal: %d", code)
	}
	defer c.CloseNow()
	l := <-r.launches
	if !l.Pty || len(l.Argv) < 3 || l.Argv[0] != "/bin/sh" || l.Credential.UID != uidOwner || !strings.Contains(strings.Join(l.Env, " "), "TERM=xterm-256color") {
		t.Fatalf("the terminal's launch: pty %v argv %q uid %d env %q", l.Pty, l.Argv, l.Credential.UID, l.Env)
	}
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageBinary, []byte("hi\r")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, c, "echo:hi\r")
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"rows":40,"cols":132}`)); err != nil {
		t.Fatal(err)
	}
	if got := <-r.sizes; got != [2]uint16{40, 132} {
		t.Errorf("window size on the node: %v, want 40x132", got)
	}
	step := l.Credential.StepID
	if st := stepOf(t, tc, id, step); st.State != api.StateRunning || st.Name != "terminal" {
		t.Fatalf("the terminal's step: %+v", st)
	}
	c.Close(websocket.StatusNormalClosure, "tab closed")
	if got := <-r.hangups; got != step {
		t.Fatalf("hung up step %d, want %d", got, step)
	}
	waitFor(t, "the terminal's step to end", func() bool { return stepOf(t, tc, id, step).State != api.StateRunning })
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("closing the terminal ended the job: %s", j.State)
	}

	// Signing out everywhere closes an open terminal and ends its step.
	c3, code := dialTerminal(t, b, id, base)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("a terminal before signing out: %d", code)
	}
	defer c3.CloseNow()
	step3 := (<-r.launches).Credential.StepID
	if code, out := callAs(t, tc, uidOwner, "POST", "/v1/dashboard/logout-all", nil); code != 200 {
		t.Fatalf("logout-all: %d %s", code, out)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, _, err := c3.Read(rctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || !strings.Contains(ce.Reason, "signed out") {
		t.Fatalf("signing out ended the terminal's socket with %v", err)
	}
	if got := <-r.hangups; got != step3 {
		t.Fatalf("signing out hung up step %d, want %d", got, step3)
	}
	signIn(t, tc, b, uidOwner)

	c2, code := dialTerminal(t, b, id, base)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("a second terminal: %d", code)
	}
	defer c2.CloseNow()
	<-r.launches
	if err := c2.Write(ctx, websocket.MessageBinary, []byte("exit\r")); err != nil {
		t.Fatal(err)
	}
	_, _, err = c2.Read(rctx)
	if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || ce.Reason != "the shell exited with code 0" {
		t.Fatalf("after the shell's exit the socket ended with %v", err)
	}
	select {
	case err := <-r.errs:
		t.Fatalf("runner: %v", err)
	default:
	}
}

// A terminal whose node refuses the launch closes its socket saying why,
// and its step does not stay behind running.
func TestDashboardTerminalLaunchRefusedEndsItsStep(t *testing.T) {
	tc, r, id, base := terminalCluster(t)
	r.refuse.Store(true)
	b := newBrowser(t, base)
	signIn(t, tc, b, uidOwner)
	c, code := dialTerminal(t, b, id, base)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("the owner's terminal: %d", code)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusInternalError || !strings.Contains(ce.Reason, "node n1") {
		t.Fatalf("a refused launch ended the socket with %v", err)
	}
	waitFor(t, "the refused terminal's step to end", func() bool {
		steps := stepsOf(t, tc, id)
		return len(steps) == 1 && steps[0].State == api.StateCancelled
	})
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("a refused terminal ended the job: %s", j.State)
	}
}
