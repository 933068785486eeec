package container

// Adopting a prepared container: a container Start made ahead of any job
// (no binds but corral-init's, no memory limit, its init holding it) is
// given to a job by changing only what depends on the job: its binds,
// its cgroup limits, the sizes of /tmp and /dev/shm, and its name. This
// takes runc's start (cgroups, the nsexec stages, the re-executed init,
// some forty mounts) off the job's path; what is left is a few system
// calls per bind.
//
// The binds are cloned in the host's mount namespace (open_tree), so a
// source resolves exactly as it would for runc, checked against the
// caller's check, given their attributes while still detached, and then
// attached from a thread that joined the container's mount namespace:
// there the thread's root is the container's, so a destination resolves
// as in the container and cannot leave it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// Adoption is what a running, prepared container takes on when a job
// adopts it (Container.Adopt).
type Adoption struct {
	// ID is the container's new name in its state root (the job's
	// container ID): its libcontainer state directory is renamed, so
	// Open(stateRoot, ID), CgroupDirs and Remove find it.
	ID string
	// Resources are the job's cgroup limits (as Spec.Resources; the device
	// rules Start set are kept).
	Resources *cgroups.Resources
	// Binds are mounted now over the container's view, shallowest
	// destination first, with the same flags Start gives them (writable:
	// nosuid,nodev; read-only: recursively ro,nosuid,nodev); a bind with
	// Checked is refused (checkError, nothing mounted) when the source
	// opened is another file. A destination the container lacks is made
	// where root can make it, as runc makes it for Start (in the job's
	// /tmp); in the read-only host view it must exist, for Start too.
	Binds []Bind
	// ShmBytes sizes /dev/shm as Spec.ShmBytes does (<= 0:
	// DefaultShmBytes; capped at the memory limit); /tmp is resized to the
	// memory limit as Start sizes it (no limit: tmpfs's default, half the
	// RAM).
	ShmBytes int64
	// Stop, as Spec.Stop: closing it while a bind's source is being opened
	// (a file system that does not answer) ends Adopt with ErrStopped.
	Stop <-chan struct{}
}

// Adopt gives c, a running container started by Start (the prepared
// one), to a job: afterwards c answers Pid, Signal, Wait, CgroupPaths and
// Destroy as a container Start made under a.ID would, its cgroup keeping
// the name it was started under. Call it before Wait.
//
// The order leaves the least to undo. Every source is opened and checked
// before anything changes, so a refused bind leaves c as it was. The
// mounts come next: they are what a user's path can make fail, and they
// change only the container's own namespace. The limits follow, and the
// rename comes last: until it succeeds the job's ID names nothing (a
// caller that destroys c and starts the job afresh finds it free), and a
// failed reload after it is undone by renaming back.
//
// On error c may hold some of the binds or limits; the caller destroys it
// (c.Destroy finds it under whichever name it has) and never runs the job
// in it.
func (c *Container) Adopt(a *Adoption) error {
	if a.Resources == nil {
		return errors.New("adopting a container needs the job's resources")
	}
	if c.image != nil {
		// Its root's writable layer is sized to the memory limit it
		// started with, and nothing here resizes it.
		return errors.New("a container in an image cannot be adopted")
	}
	// Load validates the name as Create does; only a free one will do.
	switch _, err := libcontainer.Load(c.stateRoot, a.ID); {
	case err == nil:
		return fmt.Errorf("adopting a container as %s: a container of that name exists", a.ID)
	case !errors.Is(err, libcontainer.ErrNotExist):
		return fmt.Errorf("adopting a container as %q: %w", a.ID, err)
	}
	pid, err := c.p.Pid()
	if err != nil {
		return err
	}
	// A pidfd taken now, while init is this process's unreaped child,
	// names that init for as long as it is open, even if Stop makes this
	// call return while the attaching goroutine still waits on a source
	// and the caller then kills and reaps init: the goroutine can never
	// join a namespace of a later process given the same PID.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("adopting a container: the init's pidfd: %w", err)
	}
	mem := a.Resources.Memory
	binds := shallowestFirst(a.Binds)
	errc := make(chan error, 1)
	go func() {
		err := attachBinds(pidfd, binds, mem, shmSize(a.ShmBytes, mem))
		unix.Close(pidfd) // before the answer: Adopt leaves no descriptor behind
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			return err
		}
	case <-a.Stop:
		return ErrStopped
	}
	if err := c.setResources(a.Resources); err != nil {
		return err
	}
	return c.rename(a.ID)
}

// attachBinds clones every bind's source (cloneBind), then, on a thread
// in the container's mount namespace, resizes /tmp and /dev/shm and
// attaches the clones in binds' order.
func attachBinds(pidfd int, binds []Bind, memBytes, shmBytes int64) error {
	fds := make([]int, 0, len(binds))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	dirs := make([]bool, 0, len(binds))
	for _, b := range binds {
		fd, dir, err := cloneBind(b)
		if err != nil {
			return err
		}
		fds, dirs = append(fds, fd), append(dirs, dir)
	}
	tmpSize := "50%" // tmpfs's default, as Start's /tmp without a limit
	if memBytes > 0 {
		tmpSize = sizeK(memBytes)
	}
	return inNamespaceOf(pidfd, func() error {
		if err := resizeTmpfs("/tmp", tmpSize); err != nil {
			return err
		}
		if err := resizeTmpfs("/dev/shm", sizeK(shmBytes)); err != nil {
			return err
		}
		for i, b := range binds {
			if err := mountPoint(b.Dest, dirs[i]); err != nil {
				return fmt.Errorf("mounting %s at %s in the job's container: %w", b.Source, b.Dest, err)
			}
			// Trailing symlinks too, as runc resolves a bind's destination
			// for Start (a work directory named through a link): the
			// thread's root is the container's, so no link leads out.
			if err := unix.MoveMount(fds[i], "", unix.AT_FDCWD, b.Dest,
				unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_SYMLINKS); err != nil {
				return fmt.Errorf("mounting %s at %s in the job's container: %w", b.Source, b.Dest, err)
			}
		}
		return nil
	})
}

// mountPoint makes dest when the container has nothing there, where root
// can make it, as runc makes a bind's mount point for Start: in the
// container's own file systems (a work directory under /tmp). The host
// view is read-only: a destination missing there is an error, for Start
// too.
func mountPoint(dest string, dir bool) error {
	if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	if dir {
		return os.Mkdir(dest, 0o755)
	}
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// cloneBind clones b's source with everything mounted below it, in this
// thread's (the host's) namespace, refuses it when it is not the file
// the caller checked, and gives the detached clone the attributes Start
// gives the bind (bindMounts). Its mounts become slaves: mounts made on
// the host below the source still show in the job, but nothing mounted
// in the container (a nested bind of this very call) reaches the host,
// as with runc's binds in the container's slave namespace.
func cloneBind(b Bind) (_ int, dir bool, retErr error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, b.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, false, fmt.Errorf("binding %s at %s: %w", b.Source, b.Dest, err)
	}
	defer func() {
		if retErr != nil {
			unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return -1, false, fmt.Errorf("binding %s at %s: %w", b.Source, b.Dest, err)
	}
	if b.Checked != nil && *IDOf(&st) != *b.Checked {
		return -1, false, checkError{swapped(b)}
	}
	all := &unix.MountAttr{Propagation: unix.MS_SLAVE}
	if !b.Writable {
		all.Attr_set = hostViewAttrs
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, all); err != nil {
		return -1, false, fmt.Errorf("binding %s at %s: mount_setattr: %w", b.Source, b.Dest, err)
	}
	if b.Writable { // runc remounts only the bind itself nosuid,nodev
		top := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, top); err != nil {
			return -1, false, fmt.Errorf("binding %s at %s: mount_setattr: %w", b.Source, b.Dest, err)
		}
	}
	return fd, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// inNamespaceOf runs fn on a thread of its own (onMountNSThread) that
// joined the mount namespace of the process pidfd names: its root and
// working directory are that namespace's root.
func inNamespaceOf(pidfd int, fn func() error) error {
	return onMountNSThread(func() error {
		// setns into a mount namespace refuses a thread that shares its
		// root and working directory with others (every Go thread does).
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("entering the job's container: unshare: %w", err)
		}
		if err := unix.Setns(pidfd, unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("entering the job's container: setns: %w", err)
		}
		return nil
	}, fn)
}

// resizeTmpfs sets the size of the tmpfs mounted at path (which must be
// its mount point) and changes nothing else: neither its other options
// nor the mount's flags.
func resizeTmpfs(path, size string) error {
	fd, err := unix.Fspick(unix.AT_FDCWD, path, unix.FSPICK_CLOEXEC|unix.FSPICK_SYMLINK_NOFOLLOW|unix.FSPICK_NO_AUTOMOUNT)
	if err != nil {
		return fmt.Errorf("resizing the job's %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.FsconfigSetString(fd, "size", size); err != nil {
		return fmt.Errorf("resizing the job's %s to %s: %w", path, size, err)
	}
	if err := unix.FsconfigReconfigure(fd); err != nil {
		return fmt.Errorf("resizing the job's %s to %s: %w", path, size, err)
	}
	return nil
}

// setResources applies res to the container's cgroup, keeping the device
// rules Start gave it (config): the job's devices do not change.
func (c *Container) setResources(res *cgroups.Resources) error {
	cfg := c.c.Config()
	r := *res
	r.Devices = cfg.Cgroups.Resources.Devices
	cg := *cfg.Cgroups
	cg.Resources = &r
	cfg.Cgroups = &cg
	if err := c.c.Set(cfg); err != nil {
		return fmt.Errorf("setting the job's limits: %w", err)
	}
	return nil
}

// rename moves the container's state directory to id's (never over an
// existing one) and reloads it from there: Signal, State and Destroy
// then use the new name. c.p stays: Wait still waits for the same init,
// this process's child.
func (c *Container) rename(id string) error {
	old := c.c.ID()
	from, to := filepath.Join(c.stateRoot, old), filepath.Join(c.stateRoot, id)
	if err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("renaming container %s to %s: %w", old, id, err)
	}
	lc, err := libcontainer.Load(c.stateRoot, id)
	if err != nil {
		if uerr := unix.Renameat2(unix.AT_FDCWD, to, unix.AT_FDCWD, from, unix.RENAME_NOREPLACE); uerr != nil {
			return fmt.Errorf("reloading container %s as %s: %w (and renaming it back: %v)", old, id, err, uerr)
		}
		return fmt.Errorf("reloading container %s as %s: %w", old, id, err)
	}
	c.c = lc
	return nil
}
