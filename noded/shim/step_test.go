package shim_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
	"github.com/corral-hpc/corral/stepio"
)

// fakeSrun is srun's end of a step's I/O: it accepts one runner, checks
// its hello and hands every later frame to the test.
type fakeSrun struct {
	ln     net.Listener
	conn   chan net.Conn
	frames chan stepio.Frame // closed when the runner closes
	c      net.Conn
	w      *stepio.Writer
}

func newFakeSrun(t testing.TB, token, node string) *fakeSrun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeSrun{ln: ln, conn: make(chan net.Conn, 1), frames: make(chan stepio.Frame, 256)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(f.frames)
			return
		}
		hello, err := stepio.Read(c)
		tok, n, perr := stepio.ParseHello(hello.Payload)
		if err != nil || hello.Kind != stepio.Hello || perr != nil || tok != token || n != node {
			t.Errorf("first frame %+v (%v): want hello with token %q and node %q", hello, err, token, node)
		}
		f.conn <- c
		for {
			fr, err := stepio.Read(c)
			if err != nil {
				close(f.frames)
				return
			}
			f.frames <- fr
		}
	}()
	return f
}

// writer is the connection's frame writer, once the runner has connected.
func (f *fakeSrun) writer(t testing.TB) *stepio.Writer {
	t.Helper()
	if f.w == nil {
		select {
		case c := <-f.conn:
			t.Cleanup(func() { c.Close() })
			f.c, f.w = c, stepio.NewWriter(c)
		case <-time.After(30 * time.Second):
			t.Fatal("the runner never connected")
		}
	}
	return f.w
}

// taskIO is what srun heard of one task.
type taskIO struct {
	out, err string
	exit     *stepio.ExitStatus
}

// collect reads frames until Done, calling on for each output frame; it
// fails the test on a frame after an Exit of the same task, or none at all.
func (f *fakeSrun) collect(t testing.TB, on func(stepio.Frame)) map[uint32]*taskIO {
	t.Helper()
	got := map[uint32]*taskIO{}
	timeout := time.After(60 * time.Second)
	for {
		var fr stepio.Frame
		var ok bool
		select {
		case fr, ok = <-f.frames:
		case <-timeout:
			t.Fatalf("no Done frame; heard %v", got)
		}
		if !ok {
			t.Fatalf("connection closed before Done; heard %v", got)
		}
		if fr.Kind == stepio.Done {
			return got
		}
		tio := got[fr.Task]
		if tio == nil {
			tio = &taskIO{}
			got[fr.Task] = tio
		}
		if tio.exit != nil {
			t.Errorf("frame %c for task %d after its exit", fr.Kind, fr.Task)
		}
		switch fr.Kind {
		case stepio.Stdout:
			tio.out += string(fr.Payload)
		case stepio.Stderr:
			tio.err += string(fr.Payload)
		case stepio.Exit:
			st, err := stepio.DecodeExit(fr.Payload)
			if err != nil {
				t.Fatal(err)
			}
			tio.exit = &st
		}
		if on != nil {
			on(fr)
		}
	}
}

// mustStep writes step.json for a step of tj's job whose ranks all run
// on this node, with srun at addr.
func mustStep(t testing.TB, tj *testJob, stepID int, ranks []int, argv []string, addr string) {
	t.Helper()
	l := &tj.job.Launch
	s := &shim.StepJob{
		Launch: api.StepLaunch{
			Credential: api.StepCredential{JobID: l.JobID, StepID: stepID, UID: l.UID, GID: l.GID, Tasks: len(ranks),
				Layout: []api.StepNode{{Node: node, Ranks: ranks, CPUs: 1}}},
			Argv: argv, Env: []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=" + strconv.FormatUint(l.JobID, 10)},
			Cwd: tj.work, IOAddr: addr, IOToken: "tok", MasterPort: 29500,
		},
		Node: node, Ranks: ranks, LaunchNodeIP: "127.0.0.1",
	}
	dir := shim.StepDir(tj.dir, stepID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := shim.WriteStepJob(dir, s); err != nil {
		t.Fatal(err)
	}
}

// startRunner runs `corral-shim step` (this test binary as corral-shim)
// as noded does, with a status pipe on fd 4; status yields its lines.
func startRunner(t *testing.T, jobDir string, stepID int, env ...string) (cmd *exec.Cmd, status *bufio.Scanner) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(os.Args[0], shim.StepArg, jobDir, strconv.Itoa(stepID))
	cmd.Env = append(append(os.Environ(), asShim+"=1"), env...)
	cmd.ExtraFiles = []*os.File{nil, w}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { r.Close() })
	return cmd, bufio.NewScanner(r)
}

// TestStepRunner runs a 2-task step in a running batch job as noded
// would, against a fake srun: both tasks' output arrives tagged with
// their ranks, each task's exit before Done; rank 0 gets srun's input
// and sees the batch script's file in the job's /tmp, runs as the job's
// user with no new privileges; a Signal frame reaches rank 1's trap;
// rank 0's exit 3 is its Exit frame's code and result.json's exit_code.
func TestStepRunner(t *testing.T) {
	tj, end := startJob(t, `echo from-batch > /tmp/x; touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()
	srun := newFakeSrun(t, "tok", node)
	script := `if [ "$SLURM_PROCID" = 0 ]; then
  read line; echo "rank0 got $line, /tmp/x: $(cat /tmp/x)"; id -u; grep NoNewPrivs /proc/self/status | tr -d '\t'; echo err0 >&2; exit 3
fi
trap 'echo "rank1 trapped"; exit 0' TERM
echo "rank1 ready $SLURM_LOCALID $LOCAL_WORLD_SIZE $SLURM_STEP_TASKS_PER_NODE $MASTER_ADDR:$MASTER_PORT"
while :; do sleep 0.1; done`
	mustStep(t, tj, 0, []int{0, 1}, []string{"/bin/sh", "-c", script}, srun.ln.Addr().String())
	cmd, status := startRunner(t, tj.dir, 0)
	w := srun.writer(t)
	if err := w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 0, Payload: []byte("hello\n")}); err != nil {
		t.Fatal(err)
	}
	signalled := false
	got := srun.collect(t, func(f stepio.Frame) {
		if f.Kind == stepio.Stdout && f.Task == 1 && !signalled && strings.Contains(string(f.Payload), "ready") {
			signalled = true
			if err := w.Write(stepio.Frame{Kind: stepio.Signal, Task: 1, Payload: []byte{byte(syscall.SIGTERM)}}); err != nil {
				t.Error(err)
			}
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Errorf("runner: %v", err)
	}
	want := map[uint32]taskIO{
		0: {out: "rank0 got hello, /tmp/x: from-batch\n65534\nNoNewPrivs:1\n", err: "err0\n", exit: &stepio.ExitStatus{Code: 3}},
		1: {out: "rank1 ready 1 2 2 " + node + ":29500\nrank1 trapped\n", exit: &stepio.ExitStatus{Code: 0}},
	}
	if g := got[1]; g != nil {
		// The signal reaches the task's whole tree: the shell may report
		// its sleep's end.
		g.err = strings.TrimPrefix(g.err, "Terminated\n")
	}
	for rank, w := range want {
		g := got[rank]
		if g == nil || g.out != w.out || g.err != w.err || g.exit == nil || *g.exit != *w.exit {
			t.Errorf("task %d: srun heard %+v (exit %v), want %+v (exit %v)", rank, g, exitOf(g), w, *w.exit)
		}
	}
	var lines []string
	for status.Scan() {
		lines = append(lines, status.Text())
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "started ") || lines[1] != shim.EndedLine {
		t.Errorf("status pipe said %q, want started, then %q", lines, shim.EndedLine)
	}
	res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Signal != 0 || res.Message != "" || len(res.Tasks) != 2 ||
		res.Tasks[0] != (shim.TaskResult{Rank: 0, ExitCode: 3}) || res.Tasks[1] != (shim.TaskResult{Rank: 1}) || res.CPUTimeUsec <= 0 || res.PeakMemBytes <= 0 {
		t.Errorf("result.json %+v, want exit code 3 from rank 0, usage counted", res)
	}
	if b, err := os.ReadFile(filepath.Join(shim.StepDir(tj.dir, 0), shim.RunnerPidFile)); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("runner.pid = %q (%v), want %d", b, err, cmd.Process.Pid)
	}
}

func exitOf(t *taskIO) any {
	if t == nil || t.exit == nil {
		return nil
	}
	return *t.exit
}

// startJob starts a batch job running script and returns once it wrote
// $CORRAL_SUBMIT_DIR/ready; end cancels it and checks it left nothing.
func startJob(t testing.TB, script string, edit ...func(*shim.Job)) (tj *testJob, end func() *shim.Result) {
	t.Helper()
	tj = mustJob(t, script, func(j *shim.Job) {
		for _, e := range edit {
			e(j)
		}
	})
	_, end = tj.start(t)
	ready := filepath.Join(tj.work, "ready")
	if !containertest.Eventually(30*time.Second, func() bool { _, err := os.Stat(ready); return err == nil }) {
		end()
		t.Fatalf("the job never got ready:\n%s", tj.output(t))
	}
	return tj, end
}

// start runs the job in the background; started closes once its
// process runs; end (also a cleanup) cancels it, waits for its result
// and checks it left nothing behind.
func (tj *testJob) start(t testing.TB) (started <-chan struct{}, end func() *shim.Result) {
	t.Helper()
	cancel := make(chan struct{})
	up := make(chan struct{})
	done := make(chan *shim.Result, 1)
	go func() {
		done <- shim.Run(tj.dir, shim.Controls{Cancel: cancel, Started: func(time.Time) { close(up) }})
	}()
	var r *shim.Result
	end = func() *shim.Result {
		if r == nil {
			close(cancel)
			r = <-done
			tj.mustBeClean(t)
		}
		return r
	}
	t.Cleanup(func() { end() })
	return up, end
}

// TestStepCancelAndLostSrun: SIGTERM to the runner cancels the step (a
// task that ignores SIGTERM is killed after the kill wait, and says so
// in its exit); a signal is not held up behind input the task does not
// read; a command that cannot run fails the step with the reason; a step
// whose srun goes away runs its tasks to the end all the same.
func TestStepCancelAndLostSrun(t *testing.T) {
	tj, end := startJob(t, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()

	t.Run("cancel", func(t *testing.T) {
		srun := newFakeSrun(t, "tok", node)
		mustStep(t, tj, 1, []int{0}, []string{"/bin/sh", "-c", `trap '' TERM; echo ignoring; while :; do sleep 0.1; done`}, srun.ln.Addr().String())
		cmd, _ := startRunner(t, tj.dir, 1)
		srun.writer(t)
		got := srun.collect(t, func(f stepio.Frame) {
			if f.Kind == stepio.Stdout && strings.Contains(string(f.Payload), "ignoring") {
				cmd.Process.Signal(syscall.SIGTERM)
			}
		})
		cmd.Wait()
		if g := got[0]; g == nil || g.exit == nil || *g.exit != (stepio.ExitStatus{Code: 137, Signal: 9}) {
			t.Errorf("cancelled task: %+v, want killed by SIGKILL", g)
		}
		res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 1))
		if err != nil || res.ExitCode != 137 || res.Signal != 9 {
			t.Errorf("result %+v (%v), want 137 and signal 9", res, err)
		}
	})

	t.Run("signal past unread input", func(t *testing.T) {
		srun := newFakeSrun(t, "tok", node)
		mustStep(t, tj, 4, []int{0}, []string{"/bin/sh", "-c", `trap 'echo trapped; exit 0' TERM; echo ready; while :; do sleep 0.1; done`}, srun.ln.Addr().String())
		cmd, _ := startRunner(t, tj.dir, 4)
		w := srun.writer(t)
		got := srun.collect(t, func(f stepio.Frame) {
			if f.Kind == stepio.Stdout && strings.Contains(string(f.Payload), "ready") {
				// More than the pipe holds, and more than one frame.
				w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 0, Payload: make([]byte, 300<<10)})
				w.Write(stepio.Frame{Kind: stepio.Signal, Task: stepio.AllTasks, Payload: []byte{byte(syscall.SIGTERM)}})
			}
		})
		cmd.Wait()
		if g := got[0]; g == nil || !strings.Contains(g.out, "trapped") || g.exit == nil || g.exit.Code != 0 {
			t.Errorf("task: %+v, want the signal to reach its trap although it reads no input", g)
		}
	})

	t.Run("command not found", func(t *testing.T) {
		srun := newFakeSrun(t, "tok", node)
		mustStep(t, tj, 3, []int{0, 1}, []string{"no-such-command-here"}, srun.ln.Addr().String())
		cmd, _ := startRunner(t, tj.dir, 3)
		srun.writer(t)
		got := srun.collect(t, nil)
		cmd.Wait()
		for _, rank := range []uint32{0, 1} {
			if g := got[rank]; g == nil || !strings.Contains(g.err, "no-such-command-here") || g.exit == nil || g.exit.Code != 1 {
				t.Errorf("task %d: srun heard %+v, want the reason and exit code 1", rank, g)
			}
		}
		if res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 3)); err != nil || res.ExitCode != 1 || res.Message == "" {
			t.Errorf("result %+v (%v), want exit code 1 and the reason", res, err)
		}
	})

	t.Run("srun lost", func(t *testing.T) {
		srun := newFakeSrun(t, "tok", node)
		mark := filepath.Join(tj.work, "finished")
		mustStep(t, tj, 2, []int{0}, []string{"/bin/sh", "-c", `echo one; sleep 0.5; echo two; echo done > finished; exit 5`}, srun.ln.Addr().String())
		cmd, _ := startRunner(t, tj.dir, 2)
		srun.writer(t)
		srun.c.Close() // srun is gone
		if err := cmd.Wait(); err != nil {
			t.Errorf("runner: %v", err)
		}
		if b, err := os.ReadFile(mark); err != nil || string(b) != "done\n" {
			t.Errorf("the task did not run to its end after srun went away: %q %v", b, err)
		}
		if res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 2)); err != nil || res.ExitCode != 5 {
			t.Errorf("result %+v (%v), want exit code 5", res, err)
		}
	})
}

// TestStepTerminal: with Pty, rank 0 runs on a terminal of the job's
// container: it reads srun's input from it, its size follows Winsize
// frames, and its output comes back as Stdout.
func TestStepTerminal(t *testing.T) {
	tj, end := startJob(t, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, []int{0}, []string{"/bin/sh", "-c", `test -t 0 && test -t 1 && echo isatty; read l; stty size; echo "got $l"`}, srun.ln.Addr().String())
	dir := shim.StepDir(tj.dir, 0)
	s, err := shim.ReadStepJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Launch.Pty = true
	if err := shim.WriteStepJob(dir, s); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startRunner(t, tj.dir, 0)
	w := srun.writer(t)
	sent := false
	got := srun.collect(t, func(f stepio.Frame) {
		if !sent && strings.Contains(string(f.Payload), "isatty") {
			sent = true
			w.Write(stepio.WinsizeFrame(0, 30, 100))
			w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 0, Payload: []byte("typed\n")})
		}
	})
	cmd.Wait()
	out := ""
	if got[0] != nil {
		out = strings.ReplaceAll(got[0].out, "\r", "")
	}
	if !strings.Contains(out, "isatty\n") || !strings.Contains(out, "30 100\ngot typed\n") || got[0].exit == nil || got[0].exit.Code != 0 {
		t.Errorf("terminal task said %q (exit %v), want isatty, its size 30 100 and the typed line", out, exitOf(got[0]))
	}
}

// TestStepWithoutContainer: a step for a job whose container is gone
// fails at once: srun hears why on each task's stderr, an exit code 1
// per task and Done; result.json says why.
func TestStepWithoutContainer(t *testing.T) {
	tj := mustJob(t, "true\n", nil)
	// Started once (so the runner does not wait for it), gone now.
	if err := os.WriteFile(filepath.Join(tj.dir, shim.StartedFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, []int{0, 1}, []string{"/bin/true"}, srun.ln.Addr().String())
	cmd, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	got := srun.collect(t, nil)
	cmd.Wait()
	for _, rank := range []uint32{0, 1} {
		g := got[rank]
		if g == nil || !strings.Contains(g.err, "not running") || g.exit == nil || g.exit.Code != 1 {
			t.Errorf("task %d: srun heard %+v, want the reason and exit code 1", rank, g)
		}
	}
	res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0))
	if err != nil || res.ExitCode != 1 || !strings.Contains(res.Message, "not running") || len(res.Tasks) != 2 {
		t.Errorf("result %+v (%v), want exit code 1 and the reason", res, err)
	}
}
