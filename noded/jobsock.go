package noded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/noded/shim"
)

// A job's controller socket: noded listens on <jobdir>/ctl/ctld.sock,
// the shim binds <jobdir>/ctl at /run/corral in the job's container, and
// the job's environment names it in CORRAL_SOCKET, so corral and the
// Slurm commands inside the job reach ctld with no flags, though ctld's
// own socket and noded's state are out of the job's sight. Only the
// job's own processes may use it: the peer's uid (SO_PEERCRED) must be
// the job's (or root) and its cgroup the job's, read through a pidfd of
// the very process that connected (SO_PEERPIDFD, Linux 6.5+), so neither
// a process outside the job nor a reused pid passes. Requests are forwarded as the
// job's user (jobforward.go).

// maxJobConns bounds one job's open connections to its socket: a job
// cannot tie up noded's descriptors and goroutines, nor flood ctld.
const maxJobConns = 32

// jobSocket is one job's controller socket being served.
type jobSocket struct {
	path   string
	ln     *net.UnixListener
	srv    *http.Server
	member cgroup.Member
	uid    uint32

	mu   sync.Mutex
	open int
}

// jobSocketFile is the socket's name in shim.CtlDir; the container sees
// it as api.DefaultSocket.
const jobSocketFile = "ctld.sock"

// openJobSocket creates and serves the socket of the job whose
// directory is jobDir and whose cgroup is at place, for the user of
// launch l. A socket left by an earlier noded is replaced: the container
// binds the directory, so it sees the new one.
func (d *Daemon) openJobSocket(jobDir string, place cgroup.Placement, l *api.LaunchRequest) (*jobSocket, error) {
	fail := func(err error) (*jobSocket, error) { return nil, fmt.Errorf("job %d's socket: %w", l.JobID, err) }
	member, err := d.cg.MemberOf(place)
	if err != nil {
		return fail(err)
	}
	fw, err := d.newForwarder(l.JobID, l.UID, l.GID, l.Groups)
	if err != nil {
		return fail(err)
	}
	dir := filepath.Join(jobDir, shim.CtlDir)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fail(err)
	}
	ln, err := listenIn(dir, jobSocketFile, fw.uid, fw.gid)
	if err != nil {
		return fail(err)
	}
	s := &jobSocket{path: filepath.Join(dir, jobSocketFile), ln: ln, member: member, uid: fw.uid}
	s.srv = &http.Server{
		Handler:           s.gate(fw),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
		ConnContext:       s.admit,
		ErrorLog:          d.log,
	}
	go s.srv.Serve(countingListener{s})
	return s, nil
}

// listenIn listens on dir/name, replacing a socket there, made
// connectable by uid:gid alone. The path is reached through an open
// descriptor of dir: a job directory's path may pass the 108 bytes a
// socket address holds.
func listenIn(dir, name string, uid, gid uint32) (*net.UnixListener, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	short := "/proc/self/fd/" + strconv.Itoa(fd) + "/" + name
	if st, err := os.Lstat(short); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", filepath.Join(dir, name))
		}
		os.Remove(short)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: short, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // the short name dies with fd; close unlinks the real one
	if err = os.Chown(short, int(uid), int(gid)); err == nil {
		err = os.Chmod(short, 0o600)
	}
	if err != nil {
		ln.Close()
		os.Remove(filepath.Join(dir, name))
		return nil, err
	}
	return ln, nil
}

// close stops serving, cutting open connections (the job is over), and
// removes the socket.
func (s *jobSocket) close() {
	s.srv.Close()
	os.Remove(s.path)
}

// countingListener counts a socket's open connections.
type countingListener struct{ s *jobSocket }

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.s.ln.AcceptUnix()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	l.s.open++
	over := l.s.open > maxJobConns
	l.s.mu.Unlock()
	return &jobConn{UnixConn: c, s: l.s, over: over}, nil
}

func (l countingListener) Close() error   { return l.s.ln.Close() }
func (l countingListener) Addr() net.Addr { return l.s.ln.Addr() }

// jobConn is one connection, with what admit decided for it.
type jobConn struct {
	*net.UnixConn
	s      *jobSocket
	over   bool
	once   sync.Once
	refuse string // why the peer may not use the socket; "" admitted
}

func (c *jobConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.open--
		c.s.mu.Unlock()
	})
	return c.UnixConn.Close()
}

type jobConnKey struct{}

// admit decides, once per connection, whether its peer belongs to the
// job; the handler answers a refused connection's requests with 403.
func (s *jobSocket) admit(ctx context.Context, nc net.Conn) context.Context {
	c := nc.(*jobConn)
	switch {
	case c.over:
		c.refuse = fmt.Sprintf("the job has %d connections to corral-noded open already", maxJobConns)
	default:
		if err := s.checkPeer(c.UnixConn); err != nil {
			c.refuse = err.Error()
		}
	}
	return context.WithValue(ctx, jobConnKey{}, c)
}

// checkPeer admits a peer of the job's uid (or root) in the job's
// cgroup. The cgroup is read through a pidfd of the connecting process
// itself, and the process is known alive after the read, so the file
// read was that process's and not a later one's with its pid.
func (s *jobSocket) checkPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	pidfd := -1
	var credErr, pidfdErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		pidfd, pidfdErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	}); err != nil || credErr != nil {
		return errors.New("cannot read the caller's peer credentials")
	}
	if errors.Is(pidfdErr, unix.ENOPROTOOPT) {
		// Before Linux 6.5: a pidfd of the pid the kernel reported. Should
		// the caller be gone and its pid reused by then, the uid above is
		// still the caller's, and it is forwarded as the job's user only.
		pidfd, pidfdErr = unix.PidfdOpen(int(cred.Pid), 0)
	}
	if pidfdErr != nil {
		return fmt.Errorf("cannot identify the calling process: %v", pidfdErr)
	}
	defer unix.Close(pidfd)
	if cred.Uid != s.uid && cred.Uid != 0 {
		return fmt.Errorf("uid %d may not use the socket of another user's job", cred.Uid)
	}
	in, err := s.inJob(int(cred.Pid))
	if err == nil && unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		err = errors.New("the calling process ended before it could be checked")
	}
	if err != nil {
		return fmt.Errorf("cannot check the calling process: %v", err)
	}
	if !in {
		return errors.New("the calling process is not one of the job's (not in its cgroup)")
	}
	return nil
}

// inJob reports whether process pid lies in the job's cgroup.
func (s *jobSocket) inJob(pid int) (bool, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false, err
	}
	defer f.Close()
	return s.member.Holds(f)
}

// gate answers refused connections and hands the others to fw.
func (s *jobSocket) gate(fw *forwarder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(jobConnKey{}).(*jobConn)
		switch {
		case c == nil:
			writeError(w, http.StatusInternalServerError, "no connection state")
		case c.over:
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusServiceUnavailable, c.refuse)
		case c.refuse != "":
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusForbidden, "corral-noded: "+c.refuse)
		default:
			fw.ServeHTTP(w, r)
		}
	})
}
