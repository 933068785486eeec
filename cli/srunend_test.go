package cli

import (
	"bytes"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// killedOnSIGKILL is a runner whose tasks run until srun sends SIGKILL.
func killedOnSIGKILL(t *testing.T, n *fakeStepNode, rc *runnerConn) {
	n.readUntil(rc, func(f stepio.Frame) bool { return f.Kind == stepio.Signal && f.Payload[0] == 9 })
	for _, r := range n.ranks {
		rc.exit(t, r, stepio.ExitStatus{Code: 137, Signal: 9})
	}
	rc.finish(t)
}

// TestSrunWaitEndsTheStep: with --wait the tasks still running that long
// after the first task ended are killed.
func TestSrunWaitEndsTheStep(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n1" {
			rc.exit(t, 0, stepio.ExitStatus{})
			rc.exit(t, 1, stepio.ExitStatus{})
			rc.finish(t)
			return
		}
		killedOnSIGKILL(t, n, rc)
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "--wait=1", "-i", "none", "work")
	if code != 137 || !strings.Contains(stderr, "srun: error: First task exited 1s ago\nsrun: Terminating StepId=5.2\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSrunNodeThatNeverConnects: a node that accepts the launch but never
// connects ends the step: srun says so, kills the rest, and fails.
func TestSrunNodeThatNeverConnects(t *testing.T) {
	defer func(d time.Duration) { srunConnectTimeout = d }(srunConnectTimeout)
	srunConnectTimeout = 50 * time.Millisecond
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		if n.name == "n2" {
			return // accepted, silent
		}
		if rc := dial(t, l, l.IOToken, n.name); rc != nil {
			killedOnSIGKILL(t, n, rc)
		}
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "work")
	if code != 137 || !strings.Contains(stderr, "srun: error: node n2 did not connect back within 50ms\nsrun: Terminating StepId=5.2\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	<-n1.played
	if !slices.Contains(n1.signals, 9) {
		t.Errorf("n1 got signals %v, want SIGKILL", n1.signals)
	}
}

// TestSrunLaunchRefused: a node refusing the launch fails the step; the
// tasks already started elsewhere are killed; srun fails.
func TestSrunLaunchRefused(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		if rc := dial(t, l, l.IOToken, n.name); rc != nil {
			killedOnSIGKILL(t, n, rc)
		}
	}
	n1, n2 := twoNodes(play)
	n2.refuse = "invalid step credential: expired"
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "work")
	want := "srun: error: Task launch for StepId=5.2 failed on node n2: invalid step credential: expired\nsrun: Terminating StepId=5.2\n"
	if code != 137 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	// n2 will never report the step: srun has ctld end it, rather than
	// leave it RUNNING until ctld's sweep.
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.cancels) != 1 || fc.cancels[0] != (api.StepCancelRequest{JobID: 5, StepID: 2}) {
		t.Errorf("srun asked ctld to cancel %+v, want step 5.2 once", fc.cancels)
	}
}

// TestSrunLaunchAfterNodedRestart: a step granted while n2's noded
// restarted has n2's old address, where nothing listens any more; srun
// launches there once ctld has the new one, and the step runs as any
// other, with nothing said and nothing cancelled.
func TestSrunLaunchAfterNodedRestart(t *testing.T) {
	n1, n2 := twoNodes(splitLinesPlayer(func(int) int { return 0 }))
	n2.restarted = true
	fc := newFakeStepCluster(t, n1, n2)
	code, stdout, stderr := fc.srun(t, "", inJob, "-l", "-i", "none", "work")
	if code != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if !strings.Contains(stdout, "2: rank 2 says hi\n") || !strings.Contains(stdout, "3: rank 3 says hi\n") {
		t.Errorf("stdout %q lacks n2's tasks", stdout)
	}
	n2.mu.Lock()
	defer n2.mu.Unlock()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(n2.launches) != 1 || len(fc.cancels) != 0 {
		t.Errorf("n2 got %d launches and ctld %d cancels, want 1 and 0", len(n2.launches), len(fc.cancels))
	}
}

// TestSrunDoubleInterrupt: the first Ctrl-C is forwarded with Slurm's
// notice; a second within a second kills the step; one after a pause is
// forwarded again.
func TestSrunDoubleInterrupt(t *testing.T) {
	var stderr bytes.Buffer
	cfg := &srunConfig{argv: []string{"x"}}
	g := &api.StepGrant{Layout: []api.StepNode{{Node: "n1", Addr: "http://127.0.0.1:1", Ranks: []int{0}}},
		Credential: api.StepCredential{JobID: 5, StepID: 0, Tasks: 1}}
	env := srunEnv{stderr: &stderr, stdout: &bytes.Buffer{}, getenv: func(string) string { return "" }, environ: func() []string { return nil }}
	s, err := newStepSession(cfg, env, g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.ln.Close()
	clock := time.Unix(1000, 0)
	s.now = func() time.Time { return clock }
	mine, theirs := net.Pipe()
	defer mine.Close()
	n := s.order[0]
	n.conn, n.w = mine, stepio.NewWriter(mine)
	next := func() byte {
		f, err := stepio.Read(theirs)
		if err != nil || f.Kind != stepio.Signal || f.Task != stepio.AllTasks {
			t.Fatalf("frame %+v %v", f, err)
		}
		return f.Payload[0]
	}

	s.onSignal(syscall.SIGINT)
	if sig := next(); sig != 2 || stderr.String() != "srun: interrupt (one more within 1 sec to abort)\n" {
		t.Fatalf("first Ctrl-C: signal %d, stderr %q", sig, stderr.String())
	}
	clock = clock.Add(2 * time.Second)
	s.onSignal(syscall.SIGINT)
	if sig := next(); sig != 2 || strings.Count(stderr.String(), "interrupt") != 2 {
		t.Fatalf("Ctrl-C after a pause: signal %d, stderr %q", sig, stderr.String())
	}
	clock = clock.Add(500 * time.Millisecond)
	s.onSignal(syscall.SIGINT)
	if sig := next(); sig != 9 || !strings.HasSuffix(stderr.String(), "srun: forcing job termination\nsrun: Terminating StepId=5.0\n") {
		t.Fatalf("second Ctrl-C within a second: signal %d, stderr %q", sig, stderr.String())
	}
	s.onSignal(syscall.SIGUSR1)
	if sig := next(); sig != byte(syscall.SIGUSR1) {
		t.Fatalf("SIGUSR1 forwarded as %d", sig)
	}
}

// TestSrunGivesUpOnNodesThatDoNotEnd: after killing the step srun waits
// for the nodes' reports only so long.
func TestSrunGivesUpOnNodesThatDoNotEnd(t *testing.T) {
	defer func(d time.Duration) { srunKillTimeout = d }(srunKillTimeout)
	srunKillTimeout = 50 * time.Millisecond
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n1" {
			rc.exit(t, 0, stepio.ExitStatus{Code: 1})
			rc.exit(t, 1, stepio.ExitStatus{})
			rc.finish(t)
			return
		}
		n.readUntil(rc, func(stepio.Frame) bool { return false }) // deaf to SIGKILL, until srun hangs up
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "-K", "-i", "none", "work")
	if code != 1 || !strings.HasSuffix(stderr, "srun: Terminating StepId=5.2\nsrun: error: Timed out waiting for job step to complete\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	<-n2.played // srun closed the connection
}

// TestSrunRetriesWhileNodesAreBusy: ctld's "Requested nodes are busy" is
// asked again until the step is granted, with Slurm's two notices.
func TestSrunRetriesWhileNodesAreBusy(t *testing.T) {
	defer func(first, notice time.Duration) { srunRetryFirst, srunBusyNotice = first, notice }(srunRetryFirst, srunBusyNotice)
	srunRetryFirst, srunBusyNotice = time.Millisecond, 0
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		if rc := dial(t, l, l.IOToken, n.name); rc != nil {
			rc.exit(t, 0, stepio.ExitStatus{})
			rc.finish(t)
		}
	}
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}, play: play})
	fc.busy = 3
	code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "true")
	want := "srun: Job 5 step creation temporarily disabled, retrying (Requested nodes are busy)\nsrun: Step created for StepId=5.2\n"
	if code != 0 || stderr != want || fc.busy != 0 {
		t.Errorf("exit %d, %d busy answers left, stderr %q; want 0, 0, %q", code, fc.busy, stderr, want)
	}
	// A wait shorter than srunBusyNotice goes unsaid.
	srunBusyNotice = time.Hour
	fc = newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}, play: play})
	fc.busy = 2
	if code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "true"); code != 0 || stderr != "" || fc.busy != 0 {
		t.Errorf("a short wait: exit %d, %d busy answers left, stderr %q; want 0, 0 and nothing said", code, fc.busy, stderr)
	}
	// -I: busy nodes end srun at once, the step not created.
	fc = newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}, play: play})
	fc.busy = 2
	code, _, stderr = fc.srun(t, "", inJob, "-I", "-i", "none", "true")
	if want := "srun: error: Unable to create step for job 5: Requested nodes are busy\n"; code != 1 || stderr != want || fc.busy != 1 {
		t.Errorf("srun -I on busy nodes: exit %d, %d busy answers left, stderr %q; want 1, 1, %q", code, fc.busy, stderr, want)
	}
}

// TestSrunStepEndedWithoutANode: a runner that fails before it reaches
// srun still ends its part of the step; srun learns it from ctld and stops
// waiting for that node.
func TestSrunStepEndedWithoutANode(t *testing.T) {
	defer func(d time.Duration) { srunStepPoll = d }(srunStepPoll)
	srunStepPoll = 10 * time.Millisecond
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		if n.name == "n2" {
			return // its runner failed before connecting
		}
		if rc := dial(t, l, l.IOToken, n.name); rc != nil {
			rc.exit(t, 0, stepio.ExitStatus{})
			rc.exit(t, 1, stepio.ExitStatus{})
			rc.finish(t)
		}
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	fc.ended = api.StateFailed
	code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "work")
	if code != 1 || !strings.Contains(stderr, "srun: error: StepId=5.2 ended (FAILED) before node n2 connected\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
