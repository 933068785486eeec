package shim

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/stepio"
	"golang.org/x/sys/unix"
)

// task is one rank of the step running on this node.
type task struct {
	rank, local int
	p           taskProcess
	in          *taskInput // rank 0's input; nil for the others
	pty         bool
	// ended is set once the task is reaped: its PID may be another
	// process's then, and a late signal (srun's, an abort's) must not
	// reach it.
	ended atomic.Bool
}

// taskProcess is a started task: spawned by corral-init (stepspawn.go),
// or execed by libcontainer into a container without a spawn socket.
type taskProcess interface {
	Pid() int // host PID; 0 once it is known to have ended
	Signal(os.Signal) error
	Wait() (taskExit, error)
	Close()
	files() *taskFiles
}

// taskFiles are the runner's ends of a task's stdio: pipes, or with a
// terminal only console (its master end).
type taskFiles struct{ stdin, stdout, stderr, console *os.File }

// pipes makes the task's output pipes, and its input pipe when stdin is
// set (else it reads /dev/null), and returns the task's ends: stdin,
// stdout, stderr.
func (f *taskFiles) pipes(stdin bool) (child []*os.File, err error) {
	defer func() {
		if err != nil {
			closeFiles(child)
			f.close()
		}
	}()
	if stdin {
		r, w, err := os.Pipe()
		if err != nil {
			return child, err
		}
		f.stdin, child = w, append(child, r)
	} else {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return child, err
		}
		child = append(child, null)
	}
	for _, out := range []**os.File{&f.stdout, &f.stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			return child, err
		}
		*out, child = r, append(child, w)
	}
	return child, nil
}

func (f *taskFiles) close() {
	closeFiles(slices.DeleteFunc([]*os.File{f.stdin, f.stdout, f.stderr, f.console}, func(f *os.File) bool { return f == nil }))
}

// taskExit is how a task ended, with its resource usage when known.
type taskExit struct {
	status             syscall.WaitStatus
	cpuUsec, maxRSSKiB int64
	usage              bool
}

// execProcess is a task libcontainer execed.
type execProcess struct {
	p     *container.Process
	stdio taskFiles
}

func (e *execProcess) Pid() int                   { return e.p.Pid() }
func (e *execProcess) Signal(sig os.Signal) error { return e.p.Signal(sig) }
func (e *execProcess) Close()                     { e.p.Close() }
func (e *execProcess) files() *taskFiles          { return &e.stdio }

func (e *execProcess) Wait() (taskExit, error) {
	ps, err := e.p.Wait()
	if ps == nil {
		return taskExit{status: syscall.WaitStatus(1 << 8)}, err
	}
	x := taskExit{status: ps.Sys().(syscall.WaitStatus)}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		x.cpuUsec, x.maxRSSKiB, x.usage = tvUsec(ru.Utime)+tvUsec(ru.Stime), ru.Maxrss, true
	}
	return x, nil // err only says it did not exit 0
}

// startTasks starts one process per rank of this node in the job's
// container, as the job's user, all at once: through corral-init's spawn
// socket, or where it has none by libcontainer's exec (each re-executes
// this binary as runc's init, tens of milliseconds that need not add up;
// libcontainer serializes the processes one loaded container starts, so
// each task loads its own, as concurrent `runc exec`s do). On an error it
// kills and reaps the ones it started. pm, when the step has PMI, gives
// each task its PMI variables and socket. early, when set, is the spawn
// socket taken from the shim before the container ran (ctr is nil then);
// startTasks closes it.
func startTasks(ctr *container.Running, early *initSpawner, job *Job, s *StepJob, pm *stepPMI) ([]*task, error) {
	l := &job.Launch
	cwd := s.Launch.Cwd
	if cwd == "" {
		cwd = l.WorkDir
	}
	sp := early
	if sp == nil {
		var err error
		if sp, err = containerSpawner(ctr); err != nil {
			return nil, err
		}
	}
	if sp != nil {
		defer sp.close()
	}
	tasks := make([]*task, len(s.Ranks))
	errs := make([]error, len(s.Ranks))
	var wg sync.WaitGroup
	for local, rank := range s.Ranks {
		spec := &container.ExecSpec{
			Args: s.Launch.Argv, Env: overlay(TaskEnv(job, s, rank, local), pm.env(rank)), Cwd: cwd,
			UID: int(l.UID), GID: int(l.GID), Groups: intGroups(l.Groups),
			ExtraFiles: pm.files(rank),
		}
		if rank == 0 {
			spec.Stdin = true
			spec.Terminal = s.Launch.Pty
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p taskProcess
			var err error
			if sp != nil {
				p, err = sp.spawn(spec)
			} else {
				p, err = execTask(ctr, job, spec, local)
			}
			if err != nil {
				errs[local] = fmt.Errorf("task %d: %w", rank, err)
				return
			}
			t := &task{rank: rank, local: local, p: p, pty: spec.Terminal}
			switch f := p.files(); {
			case t.pty:
				t.in = newTaskInput(f.console, true)
			case f.stdin != nil:
				t.in = newTaskInput(f.stdin, false)
			}
			tasks[local] = t
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			continue
		}
		for _, t := range tasks {
			if t != nil {
				t.signal(syscall.SIGKILL)
				t.closeStdin()
				_, _ = t.p.Wait()
				t.p.Close()
			}
		}
		return nil, err
	}
	return tasks, nil
}

// execOnly (tests) takes libcontainer's exec even where corral-init has
// a spawn socket.
var execOnly bool

// containerSpawner is corral-init's spawn socket, or nil when the
// container's corral-init has none.
func containerSpawner(ctr *container.Running) (*initSpawner, error) {
	if execOnly {
		return nil, nil
	}
	pid, err := ctr.InitPid()
	if err != nil {
		return nil, err
	}
	sp, err := openSpawner(pid)
	if errors.Is(err, errNoSpawner) {
		return nil, nil
	}
	return sp, err
}

// execTask is a task execed by libcontainer, which serializes the
// processes one loaded container starts: each task but the first loads
// its own.
func execTask(ctr *container.Running, job *Job, spec *container.ExecSpec, local int) (taskProcess, error) {
	if local > 0 {
		var err error
		if ctr, err = container.Open(job.RuncRoot, ContainerID(job.Launch.JobID)); err != nil {
			return nil, err
		}
	}
	p, err := ctr.Exec(spec)
	if err != nil {
		return nil, err
	}
	return &execProcess{p: p, stdio: taskFiles{stdin: p.Stdin, stdout: p.Stdout, stderr: p.Stderr, console: p.Console}}, nil
}

// signal sends sig to the task's process and every process below it, as
// slurmstepd signals all of a step's processes: a shell's children get it
// too. (The tasks share the job's cgroup with every other step, so the
// process tree, not the cgroup, says what is the task's.)
func (t *task) signal(sig syscall.Signal) {
	if t.ended.Load() {
		return
	}
	root := t.p.Pid()
	procs, err := listProcs("/proc")
	if err != nil || root <= 0 { // root <= 0: ended before its PID was known
		_ = t.p.Signal(sig)
		return
	}
	for _, pid := range treeOf(procs, root) {
		_ = syscall.Kill(pid, sig) // ESRCH: it ended meanwhile
	}
}

// treeOf is root and its descendants, root first.
func treeOf(procs []proc, root int) []int {
	children := make(map[int][]int)
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// writeStdin passes srun's input on; an empty chunk is the end of input.
func (t *task) writeStdin(p []byte) {
	if t.in != nil {
		t.in.put(p)
	}
}

// closeStdin ends the task's input.
func (t *task) closeStdin() {
	if t.in != nil {
		t.in.close()
	}
}

// resize sets the task's terminal size.
func (t *task) resize(rows, cols uint16) {
	if !t.pty {
		return
	}
	_ = unix.IoctlSetWinsize(int(t.p.files().console.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
}

// exitStatusOf is how a task ended, as srun reports it.
func exitStatusOf(ws syscall.WaitStatus) stepio.ExitStatus {
	if ws.Signaled() {
		return stepio.ExitStatus{Code: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return stepio.ExitStatus{Code: ws.ExitStatus()}
}
