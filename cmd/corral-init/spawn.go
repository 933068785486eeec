package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/corral-hpc/corral/container/initproto"
)

// spawner starts step tasks on the runners' requests (initproto.SpawnArg)
// and tells each runner how its task ended. A nil spawner starts nothing.
type spawner struct {
	ch int // initproto.SpawnFD
	mu sync.Mutex
	// replies are the started tasks' reply sockets by PID. A task is
	// entered before its Started answer and before the reaper may look
	// (mu is held across the fork), so its end is never missed nor
	// reported first.
	replies map[int]int
}

// maxSpawnFiles bounds the files one request may bring: the reply
// socket, the request, three stdio files and the task's extra files.
const maxSpawnFiles = 32

func newSpawner() *spawner {
	syscall.CloseOnExec(initproto.SpawnFD)
	syscall.CloseOnExec(initproto.SpawnPeerFD)
	return &spawner{ch: initproto.SpawnFD, replies: make(map[int]int)}
}

// start serves requests from now on, once their tasks' ends are caught:
// by the reaper's wait, or in hold's case its SIGCHLD.
func (s *spawner) start() {
	if s != nil {
		go s.serve()
	}
}

// serve reads requests until the socket fails (it cannot end otherwise:
// this process holds both of its ends).
func (s *spawner) serve() {
	for {
		files, err := initproto.RecvMsg(s.ch, nil, maxSpawnFiles)
		if err != nil {
			if errors.Is(err, syscall.EBADF) || errors.Is(err, initproto.ErrClosed) {
				fmt.Fprintln(os.Stderr, "corral-init: the spawn socket is gone:", err)
				return
			}
			continue // a malformed request: its files are closed
		}
		s.spawn(files)
	}
}

// spawn carries out one request. files: the reply socket, the request,
// then the task's own files.
func (s *spawner) spawn(files []int) {
	if len(files) < 2 {
		initproto.CloseAll(files)
		return
	}
	reply, own := files[0], files[2:]
	defer initproto.CloseAll(own)
	req, err := readRequest(files[1])
	if err == nil && len(own) != req.Files() {
		err = fmt.Errorf("%d files came with the request, want %d", len(own), req.Files())
	}
	var master, slave int = -1, -1
	if err == nil && req.Terminal {
		master, slave, err = openPty(req.Rows, req.Cols)
		defer func() {
			if slave >= 0 {
				syscall.Close(slave)
			}
		}()
	}
	var argv0 string
	if err == nil {
		argv0, err = lookPath(req.Argv, req.Env)
	}
	if err == nil && req.Cwd != "" {
		// The child's chdir failing would read as the command missing.
		if cerr := syscall.Access(req.Cwd, 1); cerr != nil {
			err = fmt.Errorf("cannot enter the working directory %s: %w", req.Cwd, cerr)
		}
	}
	if err != nil {
		_ = initproto.SendMsg(reply, initproto.SpawnStarted{Error: err.Error()})
		syscall.Close(reply)
		if master >= 0 {
			syscall.Close(master)
		}
		return
	}
	attr := &syscall.ProcAttr{Dir: req.Cwd, Env: req.Env, Sys: &syscall.SysProcAttr{}}
	if req.Terminal {
		// The task leads a session of its own with the terminal as its
		// controlling terminal, as runc's exec with a terminal does.
		attr.Files = []uintptr{uintptr(slave), uintptr(slave), uintptr(slave)}
		attr.Sys.Setsid, attr.Sys.Setctty, attr.Sys.Ctty = true, true, 0
	} else {
		attr.Sys.Setpgid = true // its own process group: a task's kill(0) reaches no one else
	}
	for _, fd := range own {
		attr.Files = append(attr.Files, uintptr(fd))
	}
	pidfd := -1
	attr.Sys.PidFD = &pidfd

	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := syscall.ForkExec(argv0, req.Argv, attr)
	if err != nil {
		_ = initproto.SendMsg(reply, initproto.SpawnStarted{Error: fmt.Sprintf("cannot run %s: %v", req.Argv[0], err)})
		syscall.Close(reply)
		if master >= 0 {
			syscall.Close(master)
		}
		return
	}
	back := []int{pidfd}
	if master >= 0 {
		back = append(back, master)
	}
	// A runner gone already is no reason not to run the task: it still
	// ends with the step (the runner's supervisor, or the container's end).
	_ = initproto.SendMsg(reply, initproto.SpawnStarted{Pid: pid}, back...)
	initproto.CloseAll(back)
	s.replies[pid] = reply
}

// ended tells a task's runner how it ended; false if pid is no task.
// running reports whether a spawned task has not been reaped yet.
func (s *spawner) running() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) > 0
}

// signal sends sig to every spawned task not yet reaped, and to the
// process group each leads.
func (s *spawner) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid := range s.replies {
		_ = syscall.Kill(-pid, sig)
		_ = syscall.Kill(pid, sig)
	}
}

func (s *spawner) ended(pid int, ws syscall.WaitStatus, ru *syscall.Rusage) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reply, ok := s.replies[pid]
	if !ok {
		return false
	}
	delete(s.replies, pid)
	_ = initproto.SendMsg(reply, initproto.SpawnEnded{
		Status:    uint32(ws),
		UtimeUsec: ru.Utime.Sec*1e6 + ru.Utime.Usec, StimeUsec: ru.Stime.Sec*1e6 + ru.Stime.Usec,
		MaxRSSKiB: ru.Maxrss,
	})
	syscall.Close(reply)
	return true
}

func readRequest(fd int) (*initproto.SpawnRequest, error) {
	f := os.NewFile(uintptr(fd), "request")
	defer f.Close()
	var req initproto.SpawnRequest
	if err := json.NewDecoder(f).Decode(&req); err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	if len(req.Argv) == 0 {
		return nil, errors.New("the request has no command")
	}
	return &req, nil
}

// lookPath finds argv[0] on the task's own PATH (the last PATH in env, as
// the environment a process sees it), as runc's exec does; a name with a
// slash is taken as it is.
func lookPath(argv, env []string) (string, error) {
	file := argv[0]
	if strings.Contains(file, "/") {
		return file, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + file
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && syscall.Access(p, 1) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", file)
}

// Terminal ioctls (asm-generic).
const (
	tiocsptlck  = 0x40045431
	tiocgptpeer = 0x5441
	tiocswinsz  = 0x5414
)

// openPty opens a new terminal on the container's devpts: its master end
// for the runner and its slave end for the task, of rows x cols when
// both are set. Opened by this process, the slave is the job user's.
func openPty(rows, cols uint16) (master, slave int, err error) {
	master, err = syscall.Open("/dev/ptmx", syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("opening a terminal: %w", err)
	}
	unlock := int32(0)
	if err := ioctl(master, tiocsptlck, uintptr(unsafe.Pointer(&unlock))); err != nil {
		syscall.Close(master)
		return -1, -1, fmt.Errorf("unlocking the terminal: %w", err)
	}
	if rows > 0 && cols > 0 {
		ws := [4]uint16{rows, cols, 0, 0}
		if err := ioctl(master, tiocswinsz, uintptr(unsafe.Pointer(&ws))); err != nil {
			syscall.Close(master)
			return -1, -1, fmt.Errorf("sizing the terminal: %w", err)
		}
	}
	r, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(master), tiocgptpeer, uintptr(syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC))
	if e != 0 {
		syscall.Close(master)
		return -1, -1, fmt.Errorf("opening the terminal's slave end: %w", e)
	}
	return master, int(r), nil
}

func ioctl(fd int, req, arg uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, arg); e != 0 {
		return e
	}
	return nil
}
