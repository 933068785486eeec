package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/opencontainers/cgroups/devices" // device rules for the cgroup manager
	"github.com/opencontainers/runc/libcontainer"
	_ "github.com/opencontainers/runc/libcontainer/nsenter" // container init's C entry point
	"golang.org/x/sys/unix"
)

// InitIfRequested turns this process into a container's init when
// libcontainer re-executed it for that ("<exe> init"); otherwise it
// returns at once. Call it first thing in main (or from an init func).
func InitIfRequested() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init() // never returns
	}
}

// Container is a started job container.
type Container struct {
	c       *libcontainer.Container
	p       *libcontainer.Process
	rootfs  string
	cgPaths map[string]string
	image   *Image
}

// Start creates the container and starts its process. On error nothing is
// left: no cgroup, no state, no rootfs contents.
func Start(s *Spec) (_ *Container, retErr error) {
	if err := checkStdio(s); err != nil {
		return nil, err
	}
	rootfs, err := filepath.EvalSymlinks(s.Rootfs)
	if err != nil {
		return nil, err
	}
	spec := *s
	spec.Rootfs = rootfs
	defer func() {
		if retErr != nil {
			_ = RemoveTree(rootfs)
		}
	}()
	if s.Image != nil {
		var mem int64
		if s.Resources != nil {
			mem = s.Resources.Memory
		}
		if err := mountImage(rootfs, s.Image, mem); err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil {
				_ = UnmountRoot(rootfs, s.Image.Layer)
			}
		}()
	} else {
		if err := mountHostViewRoot(rootfs); err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil {
				_ = UnmountRoot(rootfs, "")
			}
		}()
	}
	cfg, err := Config(&spec)
	if err != nil {
		return nil, err
	}
	c, err := libcontainer.Create(s.StateRoot, s.ID, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating container: %w", err)
	}
	p := &libcontainer.Process{
		Args:             s.Args,
		Env:              s.Env,
		Cwd:              s.Cwd,
		UID:              s.UID,
		GID:              s.GID,
		AdditionalGroups: s.Groups,
		Stdout:           writer(s.Stdout),
		Stderr:           writer(s.Stderr),
		Stdin:            reader(s.Stdin),
		ExtraFiles:       s.ExtraFiles,
		Init:             true,
	}
	// Start, check, then let init exec: the job runs only in the
	// mounts checked. Both can wait on a file system (startStoppable).
	if err := startStoppable(c, p, s.Stop, func() error { return checkBinds(p, s.Binds) }); err != nil {
		if err != errStuck {
			_ = c.Signal(unix.SIGKILL) // when it started, but a check failed
			_, _ = p.Wait()
			_ = c.Destroy()
		}
		var ce checkError
		if errors.Is(err, ErrStopped) || errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("starting container: %w", err)
	}
	if err := c.Exec(); err != nil {
		_ = c.Signal(unix.SIGKILL)
		_, _ = p.Wait()
		_ = c.Destroy()
		return nil, fmt.Errorf("starting container: %w", err)
	}
	st, err := c.State()
	if err != nil {
		_ = c.Signal(unix.SIGKILL)
		_, _ = p.Wait()
		_ = c.Destroy()
		return nil, err
	}
	return &Container{c: c, p: p, rootfs: rootfs, cgPaths: st.CgroupPaths, image: s.Image}, nil
}

// Pid is the host PID of the container's init process.
func (c *Container) Pid() int {
	pid, _ := c.p.Pid()
	return pid
}

// Signal sends sig to the container's init. SIGKILL ends every process of
// the container (init of a PID namespace takes the namespace with it).
func (c *Container) Signal(sig os.Signal) error { return c.c.Signal(sig) }

// Wait waits for the init process to exit.
func (c *Container) Wait() (*os.ProcessState, error) { return c.p.Wait() }

// CgroupPaths maps controllers ("" for cgroup2) to the job's cgroup
// directories, for reading usage before Destroy.
func (c *Container) CgroupPaths() map[string]string { return c.cgPaths }

// Destroy removes the cgroup, libcontainer's state and the rootfs. Call it
// after Wait.
func (c *Container) Destroy() error {
	err := c.c.Destroy()
	layer := ""
	if c.image != nil {
		layer = c.image.Layer
	}
	if uerr := UnmountRoot(c.rootfs, layer); uerr != nil && err == nil {
		err = uerr
	}
	if rerr := RemoveTree(c.rootfs); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// Remove kills and destroys a container that lost its supervisor (a shim
// that crashed). A container that does not exist is not an error.
func Remove(stateRoot, id string) error {
	c, err := libcontainer.Load(stateRoot, id)
	if errors.Is(err, libcontainer.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st, _ := c.Status(); st != libcontainer.Stopped {
		_ = c.Signal(unix.SIGKILL)
		for i := 0; i < 500; i++ {
			if st, _ := c.Status(); st == libcontainer.Stopped {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return c.Destroy()
}

// mountHostViewRoot puts a small tmpfs on the host view's rootfs. runc
// creates a mount point there for every top-level host entry and every
// bind; on disk that is some thirty inodes made and freed per job, and
// on an ext4 without a journal each allocation scans past the recently
// freed ones (11% of all CPU samples in the end-to-end benchmark, perf;
// docs/benchmarks.md). The tmpfs
// holds only those empty mount points and goes away in one unmount.
func mountHostViewRoot(rootfs string) error {
	if err := unix.Mount("tmpfs", rootfs, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
		"mode=755,size=1m,nr_inodes=4096"); err != nil {
		return fmt.Errorf("mounting the job's root: %w", err)
	}
	return nil
}

// reader and writer keep a nil *os.File a nil interface, which
// libcontainer (os/exec) turns into /dev/null.
func reader(f *os.File) io.Reader {
	if f == nil {
		return nil
	}
	return f
}

func writer(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

// checkStdio refuses stdio that runc's init would fchown to the job's
// user (fixStdioPermissions: whatever is not /dev/null and not already
// the user's): handing it a file the user may only read or append to
// would make the user its owner. Files the job must not own go in
// ExtraFiles instead (initproto.StdinFD).
func checkStdio(s *Spec) error {
	for _, f := range []struct {
		name string
		f    *os.File
	}{{"stdin", s.Stdin}, {"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if f.f == nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.f.Fd()), &st); err != nil {
			return fmt.Errorf("container %s: %w", f.name, err)
		}
		null := st.Mode&unix.S_IFMT == unix.S_IFCHR && unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3
		if !null && int(st.Uid) != s.UID {
			return fmt.Errorf("container %s %s belongs to uid %d: runc would make uid %d its owner (pass it in ExtraFiles)",
				f.name, f.f.Name(), st.Uid, s.UID)
		}
	}
	return nil
}

// checkBinds makes sure that what runc mounted at each checked bind's
// destination is the file the caller checked. The caller checks a
// source as the user, and runc resolves it again, as root, to mount it:
// a user who owns a directory on the path can swap it for a symlink in
// between, to a directory only root reaches, and would get it in the job,
// writable. Init is waiting to exec the job (runc's exec fifo), its root
// already the container's; the destination is resolved in that root as
// runc resolved it (symlinks too: a work directory is often named
// through one, /scratch to /lustre/scratch).
func checkBinds(p *libcontainer.Process, binds []Bind) error {
	pid, err := p.Pid()
	if err != nil {
		return err
	}
	root, err := unix.Open(fmt.Sprintf("/proc/%d/root", pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("checking the job's mounts: %w", err)
	}
	defer unix.Close(root)
	last := map[string]int{} // a later bind at the same place hides the earlier
	for i, b := range binds {
		last[filepath.Clean(b.Dest)] = i
	}
	for i, b := range binds {
		if b.Checked == nil || last[filepath.Clean(b.Dest)] != i {
			continue
		}
		fd, err := unix.Openat2(root, strings.TrimPrefix(filepath.Clean(b.Dest), "/"), &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
		var st unix.Stat_t
		if err == nil {
			err = unix.Fstat(fd, &st)
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("checking the job's mount of %s at %s: %w", b.Source, b.Dest, err)
		}
		if *IDOf(&st) != *b.Checked {
			return fmt.Errorf("%s changed between its check and its mount at %s (a symlink swapped in?); not running the job", b.Source, b.Dest)
		}
	}
	return nil
}

// startHook, if set (tests), runs just before a stoppable start: it can
// make runc's init hang (freeze the cgroup it is about to join).
var startHook func()

// ErrStopped is Start's answer when Spec.Stop closed during the setup.
var ErrStopped = errors.New("stopped while the container was being set up")

// errStuck is ErrStopped when runc's init could not be killed within
// stopGrace: the container is destroyed whenever runc gives up.
var errStuck = fmt.Errorf("%w (its init could not be killed yet; it is cleaned up when it can be)", ErrStopped)

// stopGrace bounds the wait for runc to give up once its init is killed:
// a process stuck in an uninterruptible wait cannot be killed, and the
// job's end must still be reported.
const stopGrace = 10 * time.Second

// checkError is a bind that failed checkBinds.
type checkError struct{ error }

// startStoppable is c.Start, which waits for runc's init to set up the
// container's mounts, then check (checkBinds), ended early by stop: it
// kills every process in the container's cgroup (thawing a frozen one,
// which SIGKILL does not reach on cgroup v1) until both have given up.
// On an error the caller kills and destroys the container, but for
// errStuck.
func startStoppable(c *libcontainer.Container, p *libcontainer.Process, stop <-chan struct{}, check func() error) error {
	start := func() error {
		if err := c.Start(p); err != nil {
			return err
		}
		if err := check(); err != nil {
			return checkError{err}
		}
		return nil
	}
	if stop == nil {
		return start()
	}
	st, err := c.State() // the cgroup's directories, known before start
	if err != nil {
		return err
	}
	if startHook != nil {
		startHook()
	}
	errc := make(chan error, 1)
	go func() { errc <- start() }()
	select {
	case err := <-errc:
		return err
	case <-stop:
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(stopGrace)
	for {
		killCgroup(st.CgroupPaths)
		select {
		case <-errc:
			return ErrStopped
		case <-giveUp:
			// c.Start holds the container's lock: Destroy after it returns.
			go func() {
				<-errc
				_ = c.Signal(unix.SIGKILL)
				_, _ = p.Wait()
				_ = c.Destroy()
			}()
			return errStuck
		case <-tick.C:
		}
	}
}

// killCgroup sends SIGKILL to every process in dirs (controller to
// directory), thawing a v1 freezer first.
func killCgroup(dirs map[string]string) {
	if d, ok := dirs["freezer"]; ok {
		_ = os.WriteFile(filepath.Join(d, "freezer.state"), []byte("THAWED"), 0)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}
