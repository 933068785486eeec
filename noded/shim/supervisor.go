package shim

import (
	"github.com/corral-hpc/corral/internal/fsutil"

	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisor is what a job's shim and a step's runner share with noded:
// their PID on disk, cancel by SIGTERM or the control pipe, and the
// status pipe; and, for a runner, the kill of a cancelled step
// (StepKillSignal).
type supervisor struct {
	cancel   chan struct{}
	kill     chan struct{} // closed before cancel on StepKillSignal
	once     sync.Once
	killOnce sync.Once
	status   *os.File // nil when noded passed none
}

// StepKillSignal, sent to a step's runner, cancels the step with a
// SIGKILL to its tasks at once, as Slurm's scancel JOB.STEP ends a step
// (rc 9); SIGTERM (its job's end) gives them the kill wait.
const StepKillSignal = syscall.SIGUSR2

// startSupervisor records this process's PID in pidFile (with its start
// time when withStart: a shim, which may have been a spare, spare.go) and
// starts listening for a cancel. The PID matters to a noded that restarts
// while this process lives, never after a host crash, so the file is not
// synced (fsutil.ReplaceFile).
func startSupervisor(pidFile string, withStart bool) (*supervisor, error) {
	line := strconv.Itoa(os.Getpid()) + "\n"
	if withStart {
		line = pidLine(os.Getpid())
	}
	if err := fsutil.ReplaceFile(pidFile, []byte(line), 0o600); err != nil {
		return nil, err
	}
	// In its own session the process gets no terminal signals; should one
	// come anyway, or should noded's end of a pipe vanish, carry on. They
	// are caught, not ignored: an ignored signal stays ignored across exec,
	// and a step's tasks, started from here, must get SIGINT (srun's
	// Ctrl-C) and SIGHUP as any program does.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	s := &supervisor{cancel: make(chan struct{}), kill: make(chan struct{})}
	term := make(chan os.Signal, 2)
	signal.Notify(term, syscall.SIGTERM, StepKillSignal)
	go func() {
		for sig := range term {
			if sig == StepKillSignal {
				s.killOnce.Do(func() { close(s.kill) })
			}
			s.stop()
		}
	}()
	if ctl := inherited(ControlFD, "control"); ctl != nil {
		go func() {
			buf := make([]byte, 1)
			for {
				n, err := ctl.Read(buf)
				if n == 1 && buf[0] == 'c' {
					s.stop()
				}
				if err != nil {
					return // noded went away: the work carries on
				}
			}
		}()
	}
	s.status = inherited(StatusFD, "status")
	return s, nil
}

func (s *supervisor) stop() { s.once.Do(func() { close(s.cancel) }) }

// say writes a line on the status pipe, if there is one.
func (s *supervisor) say(format string, a ...any) {
	if s.status != nil {
		fmt.Fprintf(s.status, format+"\n", a...)
	}
}

func (s *supervisor) started(t time.Time) { s.say("started %s", t.Format(time.RFC3339Nano)) }

// inherited returns fd as a file if the parent passed it.
func inherited(fd int, name string) *os.File {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}
