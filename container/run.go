package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	c         *libcontainer.Container
	p         *libcontainer.Process
	stateRoot string // where c's state directory is (Adopt renames it)
	rootfs    string
	cgPaths   map[string]string
	image     *Image
}

// Start creates the container and starts its process. On error nothing is
// left: no cgroup, no state, no rootfs contents. The host view is
// mounted in the container's mount namespace only (inJobRoot); an
// image's overlay in the host's too.
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
	var mem int64
	if s.Resources != nil {
		mem = s.Resources.Memory
	}
	if s.Image != nil {
		// In the host's namespace, unlike the host view: the image store
		// sees there which images running jobs use (images.Store.Remove).
		if err := mountImage(rootfs, s.Image, mem); err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil {
				_ = UnmountRoot(rootfs, s.Image.Layer)
			}
		}()
	}
	cfg, view, err := config(&spec)
	if err != nil {
		return nil, err
	}
	if s.bindsByRunc {
		cfg.Mounts = append(view.mounts(), cfg.Mounts...)
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
	// Start (in the job's root: inJobRoot), check, then let init exec:
	// the job runs only in the mounts checked. Both can wait on a file
	// system (startStoppable).
	run := func() error { return c.Start(p) }
	if s.Image == nil {
		run = func() error { return inJobRoot(rootfs, view, s.bindsByRunc, func() error { return c.Start(p) }) }
	}
	if err := startStoppable(c, p, s.Stop, run, func() error { return checkBinds(p, s.Binds) }); err != nil {
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
	return &Container{c: c, p: p, stateRoot: s.StateRoot, rootfs: rootfs, cgPaths: st.CgroupPaths, image: s.Image}, nil
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

// Destroy removes the cgroup, libcontainer's state, an image's mounts
// (the host view's went with the container's namespace) and the rootfs
// directory. Call it after Wait.
func (c *Container) Destroy() error {
	err := c.c.Destroy()
	if c.image != nil {
		if uerr := UnmountRoot(c.rootfs, c.image.Layer); uerr != nil && err == nil {
			err = uerr
		}
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
