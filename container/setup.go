package container

// What guards a container's setup, between runc's create and the job's
// exec: the binds must be what the caller checked, and Spec.Stop must
// end a setup that waits on a file system.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

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
			return swapped(b)
		}
	}
	return nil
}

// swapped is the refusal of bind b, whose source is not the file the
// caller checked.
func swapped(b Bind) error {
	return fmt.Errorf("%s changed between its check and its mount at %s (a symlink swapped in?); not running the job", b.Source, b.Dest)
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

// startStoppable is run (c.Start, which waits for runc's init to set up
// the container's mounts), then check (checkBinds), ended early by stop: it
// kills every process in the container's cgroup (thawing a frozen one,
// which SIGKILL does not reach on cgroup v1) until both have given up.
// On an error the caller kills and destroys the container, but for
// errStuck.
func startStoppable(c *libcontainer.Container, p *libcontainer.Process, stop <-chan struct{}, run, check func() error) error {
	start := func() error {
		if err := run(); err != nil {
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
	killed := map[int]bool{}
	for {
		killCgroup(st.CgroupPaths, killed)
		select {
		case <-errc:
			reapKilled(killed)
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
// directory), thawing a v1 freezer first, and adds their PIDs to killed.
func killCgroup(dirs map[string]string, killed map[int]bool) {
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
				killed[pid] = true
			}
		}
	}
}

// reapKilled collects the killed processes that are this process's own
// children: runc's bootstrap processes (runc:[0:PARENT], runc:[1:CHILD])
// killed mid-start are children libcontainer no longer waits for, and
// would stay zombies in the job's cgroup until the shim exits. It waits
// at most a second for a process that is still dying; a PID that is not
// a child answers ECHILD and is skipped.
func reapKilled(killed map[int]bool) {
	deadline := time.Now().Add(time.Second)
	for len(killed) > 0 && time.Now().Before(deadline) {
		for pid := range killed {
			var ws unix.WaitStatus
			switch got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); {
			case got == pid, err != nil: // reaped, or not ours (ECHILD)
				delete(killed, pid)
			}
		}
		if len(killed) > 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
