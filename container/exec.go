package container

import (
	"errors"
	"fmt"
	"os"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// ErrNotRunning is Open's answer for a container that does not exist
// (any more) or whose init has ended: there is nothing to exec into.
var ErrNotRunning = errors.New("the job's container is not running")

// Running is a job container started by another process (the job's shim),
// loaded from its libcontainer state to start more processes in it.
type Running struct {
	c *libcontainer.Container
}

// Open loads the running container id from stateRoot.
func Open(stateRoot, id string) (*Running, error) {
	c, err := libcontainer.Load(stateRoot, id)
	if errors.Is(err, libcontainer.ErrNotExist) {
		return nil, fmt.Errorf("%w (container %s)", ErrNotRunning, id)
	}
	if err != nil {
		return nil, fmt.Errorf("loading container %s: %w", id, err)
	}
	if st, err := c.Status(); err != nil || st != libcontainer.Running {
		return nil, fmt.Errorf("%w (container %s is %v)", ErrNotRunning, id, st)
	}
	return &Running{c: c}, nil
}

// CgroupDirs maps controllers ("" for cgroup2) to the cgroup directories
// of container id, running or paused (its cgroup frozen: a suspended
// job, which Open refuses).
func CgroupDirs(stateRoot, id string) (map[string]string, error) {
	c, err := libcontainer.Load(stateRoot, id)
	if errors.Is(err, libcontainer.ErrNotExist) {
		return nil, fmt.Errorf("%w (container %s)", ErrNotRunning, id)
	}
	if err != nil {
		return nil, fmt.Errorf("loading container %s: %w", id, err)
	}
	if st, err := c.Status(); err != nil || st != libcontainer.Running && st != libcontainer.Paused {
		return nil, fmt.Errorf("%w (container %s is %v)", ErrNotRunning, id, st)
	}
	st, err := c.State()
	if err != nil {
		return nil, err
	}
	return st.CgroupPaths, nil
}

// InitPid is the host PID of the container's init (corral-init).
func (r *Running) InitPid() (int, error) {
	st, err := r.c.State()
	if err != nil {
		return 0, err
	}
	return st.InitProcessPid, nil
}

// CgroupPaths maps controllers ("" for cgroup2) to the container's cgroup
// directories: an exec'd process is charged there.
func (r *Running) CgroupPaths() (map[string]string, error) {
	st, err := r.c.State()
	if err != nil {
		return nil, err
	}
	return st.CgroupPaths, nil
}

// ExecSpec is a process to start in a running container. It joins the
// container's namespaces and cgroup, with the container's seccomp filter,
// capabilities, umask and no_new_privs (what Config gave the job).
type ExecSpec struct {
	Args, Env []string
	Cwd       string
	UID, GID  int
	Groups    []int
	// Stdin: give the process a pipe for input (Process.Stdin); without
	// it, its input is /dev/null.
	Stdin bool
	// Terminal puts the process on a new pseudo-terminal of the
	// container's devpts, of Rows x Cols when both are set; its master
	// end is Process.Console, and Stdin and the output pipes are unused.
	Terminal   bool
	Rows, Cols uint16
	// ExtraFiles are passed on as the process's fds 3, 4, ... (a step's
	// PMI socket); the caller keeps and closes them.
	ExtraFiles []*os.File
}

// Process is a process started by Exec. Stdout and Stderr are the read
// ends of its output pipes, Stdin the write end of its input (nil without
// ExecSpec.Stdin); with a terminal only Console is set. The caller closes
// them.
type Process struct {
	p              *libcontainer.Process
	Stdin          *os.File
	Stdout, Stderr *os.File
	Console        *os.File
	childFiles     []*os.File
	consoleParent  *os.File
}

// Exec starts s in the container. The process is its own: it is not the
// container's init and does not end the container when it exits, and it
// is the caller's child (Wait reaps it).
//
// Its stdio are pipes Exec makes, never the caller's files: runc's init
// hands a process's stdio to its user (fchown), harmless for a pipe.
func (r *Running) Exec(s *ExecSpec) (_ *Process, retErr error) {
	if len(s.Args) == 0 {
		return nil, errors.New("exec: no command")
	}
	nnp := true
	p := &Process{}
	defer func() {
		if retErr != nil {
			p.closeChildEnds()
			p.closeParentEnds()
		}
	}()
	lp := &libcontainer.Process{
		Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		UID: s.UID, GID: s.GID, AdditionalGroups: s.Groups,
		NoNewPrivileges: &nnp,
		Init:            false,
		ExtraFiles:      s.ExtraFiles,
	}
	if s.Terminal {
		parent, child, err := socketPair()
		if err != nil {
			return nil, err
		}
		p.consoleParent = parent
		p.childFiles = append(p.childFiles, child)
		lp.ConsoleSocket = child
		lp.ConsoleWidth, lp.ConsoleHeight = s.Cols, s.Rows
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.Stdout, lp.Stdout = outR, outW
		p.childFiles = append(p.childFiles, outW)
		errR, errW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.Stderr, lp.Stderr = errR, errW
		p.childFiles = append(p.childFiles, errW)
		if s.Stdin {
			inR, inW, err := os.Pipe()
			if err != nil {
				return nil, err
			}
			p.Stdin, lp.Stdin = inW, inR
			p.childFiles = append(p.childFiles, inR)
		}
	}
	err := r.c.Run(lp)
	// The child's ends are the process's now (or nobody's): closing ours
	// lets a read of the console socket or the pipes see its end.
	p.closeChildEnds()
	if err != nil {
		if st, serr := r.c.Status(); serr == nil && st != libcontainer.Running {
			return nil, fmt.Errorf("%w: %v", ErrNotRunning, err)
		}
		return nil, fmt.Errorf("starting %s in the job's container: %w", s.Args[0], err)
	}
	p.p = lp
	if s.Terminal {
		master, err := recvFile(p.consoleParent)
		p.consoleParent.Close()
		p.consoleParent = nil
		if err != nil {
			_ = lp.Signal(unix.SIGKILL)
			_, _ = lp.Wait()
			return nil, fmt.Errorf("receiving the task's terminal: %w", err)
		}
		p.Console = master
	}
	return p, nil
}

func (p *Process) closeChildEnds() {
	for _, f := range p.childFiles {
		f.Close()
	}
	p.childFiles = nil
}

func (p *Process) closeParentEnds() {
	for _, f := range []*os.File{p.Stdin, p.Stdout, p.Stderr, p.Console, p.consoleParent} {
		if f != nil {
			f.Close()
		}
	}
}

// Close closes the caller's ends of the process's stdio and terminal.
func (p *Process) Close() { p.closeParentEnds() }

// Pid is the process's host PID.
func (p *Process) Pid() int {
	pid, _ := p.p.Pid()
	return pid
}

// Signal sends sig to the process (not to its children).
func (p *Process) Signal(sig os.Signal) error { return p.p.Signal(sig) }

// Wait waits for the process to exit and reaps it.
func (p *Process) Wait() (*os.ProcessState, error) { return p.p.Wait() }

func socketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("console socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "console-parent"), os.NewFile(uintptr(fds[1]), "console-child"), nil
}

// recvFile receives the one file descriptor runc's init sends on the
// console socket: the terminal's master end.
func recvFile(sock *os.File) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), name, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%d control messages, want 1", len(msgs))
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, err
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("%d file descriptors, want 1", len(fds))
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}
