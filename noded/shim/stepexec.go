package shim

import (
	"fmt"
	"os"
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
	p           *container.Process
	in          *taskInput // rank 0's input; nil for the others
	pty         bool
	// ended is set once the task is reaped: its PID may be another
	// process's then, and a late signal (srun's, an abort's) must not
	// reach it.
	ended atomic.Bool
}

// startTasks execs one process per rank of this node into the job's
// container, as the job's user, all at once: each exec re-executes this
// binary as runc's init, tens of milliseconds that need not add up.
// (libcontainer serializes the processes one loaded container starts, so
// each task loads its own, as concurrent `runc exec`s do.) On an error it
// kills and reaps the ones it started. pm, when the step has PMI, gives
// each task its PMI variables and socket.
func startTasks(ctr *container.Running, job *Job, s *StepJob, pm *stepPMI) ([]*task, error) {
	l := &job.Launch
	cwd := s.Launch.Cwd
	if cwd == "" {
		cwd = l.WorkDir
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
			c := ctr
			if local > 0 {
				var err error
				if c, err = container.Open(job.RuncRoot, ContainerID(l.JobID)); err != nil {
					errs[local] = fmt.Errorf("task %d: %w", rank, err)
					return
				}
			}
			p, err := c.Exec(spec)
			if err != nil {
				errs[local] = fmt.Errorf("task %d: %w", rank, err)
				return
			}
			t := &task{rank: rank, local: local, p: p, pty: p.Console != nil}
			switch {
			case t.pty:
				t.in = newTaskInput(p.Console, true)
			case p.Stdin != nil:
				t.in = newTaskInput(p.Stdin, false)
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

// signal sends sig to the task's process and every process below it, as
// slurmstepd signals all of a step's processes: a shell's children get it
// too. (The tasks share the job's cgroup with every other step, so the
// process tree, not the cgroup, says what is the task's.)
func (t *task) signal(sig syscall.Signal) {
	if t.ended.Load() {
		return
	}
	procs, err := listProcs("/proc")
	if err != nil {
		_ = t.p.Signal(sig)
		return
	}
	for _, pid := range treeOf(procs, t.p.Pid()) {
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
	_ = unix.IoctlSetWinsize(int(t.p.Console.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
}

// exitStatusOf is how a task ended, as srun reports it.
func exitStatusOf(ps *os.ProcessState) stepio.ExitStatus {
	if ps == nil {
		return stepio.ExitStatus{Code: 1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return stepio.ExitStatus{Code: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return stepio.ExitStatus{Code: ps.ExitCode()}
}
