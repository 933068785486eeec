package cli

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// openPty opens a pseudo-terminal pair, as a terminal emulator would.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here (/dev/ptmx: %v)", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close(); master.Close() })
	return master, slave
}

// TestSrunPty: with --pty srun asks for task 0's terminal, makes its own
// terminal raw for the step (and puts it back after), sends its window
// size and relays keys as typed.
func TestSrunPty(t *testing.T) {
	master, slave := openPty(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		winsize  []uint16
		typed    []byte
		rawInRun bool
	)
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if !l.Pty {
			t.Errorf("launch without Pty")
		}
		// srun is raw once it relays anything: keys typed now arrive unbuffered.
		if tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS); err == nil {
			mu.Lock()
			rawInRun = tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) == 0 && tio.Oflag&unix.OPOST == 0
			mu.Unlock()
		}
		master.Write([]byte{'l', 's', 3}) // "ls" then Ctrl-C: raw, so no SIGINT to srun, no line wait
		for rawInRun {                    // (a cooked terminal would hold the keys for a newline)
			f, err := stepio.Read(rc.c)
			if err != nil {
				t.Errorf("runner read: %v", err)
				return
			}
			mu.Lock()
			switch f.Kind {
			case stepio.Winsize:
				r, c, _ := stepio.DecodeWinsize(f.Payload)
				winsize = []uint16{r, c}
			case stepio.Stdin:
				typed = append(typed, f.Payload...)
			case stepio.Signal:
				t.Errorf("a signal frame %v: Ctrl-C must travel as a key", f.Payload)
			}
			done := len(typed) >= 3 && winsize != nil
			mu.Unlock()
			if done {
				break
			}
		}
		rc.out(t, 0, "$ ls\r\n")
		rc.exit(t, 0, stepio.ExitStatus{Code: 130, Signal: 2})
		rc.finish(t)
	}
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}, play: play})
	var stdout, stderr bytes.Buffer
	env := srunEnv{
		stdin: slave, stdout: &stdout, stderr: &stderr,
		getenv:  func(k string) string { return inJob[k] },
		environ: func() []string { return nil },
		client:  func() *api.Client { return api.NewClient(fc.socket) },
	}
	code := runSrun(context.Background(), env, []string{"--pty", "bash"})
	if code != 130 || stdout.String() != "$ ls\r\n" {
		t.Errorf("exit %d stdout %q, want 130 and the task's output", code, stdout.String())
	}
	// srun's own lines end CR LF while the terminal is raw.
	if !strings.Contains(stderr.String(), "srun: error: n1: task 0: Interrupt\r\n") {
		t.Errorf("stderr %q", stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if !rawInRun {
		t.Errorf("srun's terminal was not raw during the step")
	}
	if len(winsize) != 2 || winsize[0] != 30 || winsize[1] != 100 {
		t.Errorf("window size %v, want [30 100]", winsize)
	}
	if string(typed) != "ls\x03" {
		t.Errorf("typed %q, want %q", typed, "ls\x03")
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil || *after != *before {
		t.Errorf("terminal not restored: %+v, was %+v (%v)", after, before, err)
	}
}
