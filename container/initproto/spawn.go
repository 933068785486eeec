package initproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
)

// Spawning a step's task: corral-init forks and execs it on a step
// runner's request, so the task starts in the container with everything
// corral-init already has (namespaces, cgroup, seccomp filter,
// no_new_privs, capabilities, user, groups, umask, rlimits) without a
// second runc init (libcontainer's exec re-executes the runner's binary
// and joins every namespace and cgroup afresh, tens of milliseconds).
//
// With SpawnArg (after StdioArg, before the script or HoldArg) the shim
// passes the two ends of a SOCK_SEQPACKET socket pair as SpawnFD and
// SpawnPeerFD. corral-init reads requests on SpawnFD. It never uses
// SpawnPeerFD: it only keeps it open so that a runner on the host (root)
// can take a copy with pidfd_getfd and send on it. Nothing else can
// reach the pair: corral-init's children do not inherit it
// (close-on-exec), and a process of the job that took a copy the same
// way (it runs as corral-init's user) could only start processes as
// that user in that container, which it can do anyway.
//
// A request is one message on SpawnPeerFD: one byte of data and, as
// SCM_RIGHTS, the task's reply socket (one end of a SOCK_SEQPACKET pair),
// a file holding the SpawnRequest as JSON (a memfd: no size limit
// besides exec's own), then the task's stdin, stdout and stderr (none
// with a terminal), then SpawnRequest.ExtraFiles files, the task's fds
// 3, 4, .... On the reply socket corral-init answers a SpawnStarted
// (with, as SCM_RIGHTS, a pidfd of the task and, with a terminal, the
// terminal's master end), and when the task has been reaped a
// SpawnEnded. End of file before SpawnEnded means corral-init is gone
// (and with it, as PID 1, every process of the container).
const (
	SpawnArg    = "--spawn-fds"
	SpawnFD     = 7
	SpawnPeerFD = 8
)

// SpawnRequest is a task to start.
type SpawnRequest struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
	// Terminal: run the task on a new pseudo-terminal of the container's
	// devpts, Rows x Cols when both are set, as the session leader with
	// it as controlling terminal; no stdio files come with the request.
	Terminal   bool   `json:"terminal,omitempty"`
	Rows       uint16 `json:"rows,omitempty"`
	Cols       uint16 `json:"cols,omitempty"`
	ExtraFiles int    `json:"extra_files,omitempty"`
}

// Files is how many files come with the request after the reply socket
// and the request itself.
func (r *SpawnRequest) Files() int {
	if r.Terminal {
		return r.ExtraFiles
	}
	return 3 + r.ExtraFiles
}

// SpawnStarted answers a request: the task's PID in the container, or
// why it could not start (then no files come with it).
type SpawnStarted struct {
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// SpawnEnded is how the task ended: its raw wait status and resource
// usage (its own and its reaped descendants', as wait4 gives it).
type SpawnEnded struct {
	Status    uint32 `json:"status"`
	UtimeUsec int64  `json:"utime_usec"`
	StimeUsec int64  `json:"stime_usec"`
	MaxRSSKiB int64  `json:"max_rss_kib"`
}

// maxSpawnMsg bounds a reply's JSON; requests travel in a file.
const maxSpawnMsg = 4096

// SendMsg sends v as JSON in one message on the socket fd, with files
// as SCM_RIGHTS. A peer gone is EPIPE, never SIGPIPE.
func SendMsg(fd int, v any, files ...int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		oob = syscall.UnixRights(files...)
	}
	for {
		err = syscall.Sendmsg(fd, b, oob, nil, syscall.MSG_NOSIGNAL)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// RecvMsg receives one message from the socket fd into v (skipped when
// v is nil) and the files that came with it, close-on-exec. It returns
// io.EOF's counterpart, ErrClosed, when the peer is gone.
func RecvMsg(fd int, v any, maxFiles int) ([]int, error) {
	buf := make([]byte, maxSpawnMsg)
	oob := make([]byte, syscall.CmsgSpace(4*maxFiles))
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = syscall.Recvmsg(fd, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	var files []int
	if oobn > 0 {
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			fds, err := syscall.ParseUnixRights(&msgs[i])
			if err == nil {
				files = append(files, fds...)
			}
		}
	}
	if n == 0 && oobn == 0 {
		return nil, ErrClosed
	}
	if flags&(syscall.MSG_CTRUNC|syscall.MSG_TRUNC) != 0 {
		CloseAll(files)
		return nil, errors.New("a spawn message was cut short (too large, or too many files)")
	}
	if v != nil {
		if err := json.Unmarshal(buf[:n], v); err != nil {
			CloseAll(files)
			return nil, fmt.Errorf("a spawn message: %w", err)
		}
	}
	return files, nil
}

// ErrClosed is RecvMsg's answer when the peer closed its end.
var ErrClosed = errors.New("the peer closed the socket")

// CloseAll closes fds.
func CloseAll(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}
