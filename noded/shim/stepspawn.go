package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/initproto"
	"golang.org/x/sys/unix"
)

// A step's tasks start through the job's corral-init (initproto's spawn
// socket): it forks and execs each task, which so inherits the container
// as corral-init has it, at a fraction of the cost of libcontainer's exec
// (a re-executed runner binary as runc's init, joining every namespace and
// cgroup). A container whose corral-init has no spawn socket (started
// before corral-init had one) gets libcontainer's exec, as before.

// spawnPair is the spawn socket's pair of ends, for corral-init's
// initproto.SpawnFD and initproto.SpawnPeerFD.
func spawnPair() ([]*os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the steps' spawn socket: %w", err)
	}
	return []*os.File{os.NewFile(uintptr(fds[0]), "spawn"), os.NewFile(uintptr(fds[1]), "spawn-peer")}, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// errNoSpawner: the container's corral-init takes no spawn requests.
var errNoSpawner = errors.New("the job's corral-init has no spawn socket")

// initSpawner is a runner's copy of the sending end of corral-init's
// spawn socket.
type initSpawner struct {
	ch *os.File
	// pidNS is corral-init's PID namespace, where every task must be;
	// a spawner taken before the container ran learns it by resolve, at
	// the first answer (stepearly.go).
	mu      sync.Mutex
	pidNS   string
	resolve func() (string, error)
}

// openSpawner takes a copy of the spawn socket from corral-init (host
// PID initPid) with pidfd_getfd; errNoSpawner if it has none.
func openSpawner(initPid int) (*initSpawner, error) {
	pidfd, err := unix.PidfdOpen(initPid, 0)
	if err != nil {
		return nil, fmt.Errorf("%w (pidfd_open: %v)", container.ErrNotRunning, err)
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, initproto.SpawnPeerFD, 0)
	if errors.Is(err, unix.EBADF) {
		return nil, errNoSpawner
	}
	if err != nil {
		return nil, fmt.Errorf("taking corral-init's spawn socket: %w", err)
	}
	unix.CloseOnExec(fd)
	// Whatever else an older corral-init had at that number is no spawn socket.
	typ, terr := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	dom, derr := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if terr != nil || derr != nil || typ != unix.SOCK_SEQPACKET || dom != unix.AF_UNIX {
		unix.Close(fd)
		return nil, errNoSpawner
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", initPid))
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%w (%v)", container.ErrNotRunning, err)
	}
	return &initSpawner{ch: os.NewFile(uintptr(fd), "spawn"), pidNS: ns}, nil
}

func (sp *initSpawner) close() { sp.ch.Close() }

// spawned is a task corral-init started: the runner's side of it.
type spawned struct {
	pid    int      // host PID; 0 once it is known to have ended
	pidfd  *os.File // signals reach the task itself, never a reused PID
	reply  *os.File
	stdio  taskFiles
	parent string // the command, for messages
}

// spawn starts s through corral-init. The task's stdio are pipes made
// here, handed to the job's user as runc's exec does (a task may reopen
// /dev/stdout); without s.Stdin it reads /dev/null.
func (sp *initSpawner) spawn(s *container.ExecSpec) (_ *spawned, retErr error) {
	if len(s.Args) == 0 {
		return nil, errors.New("exec: no command")
	}
	req := initproto.SpawnRequest{Argv: s.Args, Env: s.Env, Cwd: s.Cwd, Terminal: s.Terminal,
		Rows: s.Rows, Cols: s.Cols, ExtraFiles: len(s.ExtraFiles)}
	reqFile, err := requestFile(&req)
	if err != nil {
		return nil, err
	}
	defer reqFile.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("a task's reply socket: %w", err)
	}
	p := &spawned{reply: os.NewFile(uintptr(fds[0]), "reply"), parent: s.Args[0]}
	theirReply := os.NewFile(uintptr(fds[1]), "reply-child")
	defer theirReply.Close()
	defer func() {
		if retErr != nil {
			p.Close()
		}
	}()
	var child []*os.File
	defer func() { closeFiles(child) }()
	if !s.Terminal {
		if child, err = p.stdio.pipes(s.Stdin); err != nil {
			return nil, err
		}
		for _, f := range child {
			if f.Name() != os.DevNull {
				_ = f.Chown(s.UID, -1) // the owner only, as runc's init does
			}
		}
	}
	send := []int{int(theirReply.Fd()), int(reqFile.Fd())}
	for _, f := range append(append([]*os.File(nil), child...), s.ExtraFiles...) {
		send = append(send, int(f.Fd()))
	}
	if err := initproto.SendMsg(int(sp.ch.Fd()), struct{}{}, send...); err != nil {
		return nil, fmt.Errorf("asking corral-init for the task: %w", spawnGone(err))
	}
	theirReply.Close()
	closeFiles(child)
	child = nil

	var st initproto.SpawnStarted
	got, err := initproto.RecvMsg(int(p.reply.Fd()), &st, 2)
	if err != nil {
		return nil, fmt.Errorf("starting %s in the job's container: %w", s.Args[0], spawnGone(err))
	}
	if st.Error != "" || len(got) < 1 || s.Terminal && len(got) < 2 {
		initproto.CloseAll(got)
		if st.Error == "" {
			st.Error = "corral-init sent no process"
		}
		return nil, fmt.Errorf("starting %s in the job's container: %s", s.Args[0], st.Error)
	}
	p.pidfd = os.NewFile(uintptr(got[0]), "pidfd")
	if s.Terminal {
		p.stdio.console = os.NewFile(uintptr(got[1]), "console")
	}
	if p.pid, err = sp.hostPid(p.pidfd); err != nil {
		_ = unix.PidfdSendSignal(int(p.pidfd.Fd()), unix.SIGKILL, nil, 0)
		return nil, err
	}
	return p, nil
}

// requestFile is a memfd holding req, at offset 0.
func requestFile(req *initproto.SpawnRequest) (*os.File, error) {
	fd, err := unix.MemfdCreate("spawn-request", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("a spawn request: %w", err)
	}
	f := os.NewFile(uintptr(fd), "spawn-request")
	if err := json.NewEncoder(f).Encode(req); err != nil {
		f.Close()
		return nil, fmt.Errorf("a spawn request: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hostPid is the host PID of the task behind pidfd (the "Pid:" line of
// its fdinfo, in this process's PID namespace), checked to be in the
// job's PID namespace: the answer came from inside the container. 0
// when the task has ended already.
func (sp *initSpawner) hostPid(pidfd *os.File) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/self/fdinfo/%d", pidfd.Fd()))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	pid := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			pid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if pid <= 0 {
		return 0, nil // ended (and reaped) already
	}
	want, err := sp.namespace()
	if err != nil {
		return 0, err
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return 0, nil // ended meanwhile
	}
	if ns != want {
		return 0, fmt.Errorf("corral-init answered with process %d, which is not in the job's container", pid)
	}
	return pid, nil
}

// namespace is corral-init's PID namespace.
func (sp *initSpawner) namespace() (string, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.pidNS == "" && sp.resolve != nil {
		ns, err := sp.resolve()
		if err != nil {
			return "", err
		}
		sp.pidNS = ns
	}
	return sp.pidNS, nil
}

func spawnGone(err error) error {
	if errors.Is(err, initproto.ErrClosed) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNREFUSED) {
		return fmt.Errorf("%w: corral-init is gone", container.ErrNotRunning)
	}
	return err
}

func (p *spawned) Pid() int { return p.pid }

func (p *spawned) Signal(sig os.Signal) error {
	return unix.PidfdSendSignal(int(p.pidfd.Fd()), sig.(syscall.Signal), nil, 0)
}

func (p *spawned) files() *taskFiles { return &p.stdio }

// Wait reads the task's end from corral-init. Without it (corral-init
// ended, and as PID 1 took the container's processes with it) the task
// was killed.
func (p *spawned) Wait() (taskExit, error) {
	var e initproto.SpawnEnded
	if _, err := initproto.RecvMsg(int(p.reply.Fd()), &e, 0); err != nil {
		return taskExit{status: syscall.WaitStatus(syscall.SIGKILL)}, fmt.Errorf("%s: %w", p.parent, spawnGone(err))
	}
	return taskExit{status: syscall.WaitStatus(e.Status), cpuUsec: e.UtimeUsec + e.StimeUsec, maxRSSKiB: e.MaxRSSKiB, usage: true}, nil
}

// Close closes the runner's ends of the task's files.
func (p *spawned) Close() {
	p.stdio.close()
	for _, f := range []*os.File{p.pidfd, p.reply} {
		if f != nil {
			f.Close()
		}
	}
}
