package container

// The host view is prepared here, not by runc, in a mount namespace of
// one thread's own: the rootfs tmpfs, the host's
// top-level symlinks, and one recursive read-only bind per other top-level
// host entry. runc's init is started from that thread, so its namespace is
// a copy of this one, and its first step, a recursive bind of the rootfs
// onto itself, takes the whole view along. runc would make each bind with
// its path-safety checks (a mount point made and opened beneath the root,
// the mount reopened, /proc lookups): about a third of a millisecond of
// CPU each, some twenty per job (docs/benchmarks.md); here each is three
// system calls on a tmpfs only this process can reach. And the host's own
// mount namespace never holds a job's root: nothing is left to unmount
// when a shim dies. The price: should the lookup of a top-level entry hang
// (a file system mounted right there that does not answer), it hangs in
// this process, where Spec.Stop has no init to kill, and Start gives up
// after stopGrace (errStuck) instead of at once; the job's own binds (work
// directory, home, --mount) are still runc's, in its killable init.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// viewPlan is the host view of one job, as hostView read it.
type viewPlan struct {
	links []viewLink
	binds []viewBind
}

// viewLink is a top-level symlink of the host, recreated in the rootfs.
type viewLink struct{ name, target string }

// viewBind is a recursive read-only bind of a top-level host entry.
type viewBind struct {
	mount *configs.Mount
	dir   bool // a directory, else a regular file
}

func (v *viewPlan) mounts() []*configs.Mount {
	ms := make([]*configs.Mount, len(v.binds))
	for i, b := range v.binds {
		ms[i] = b.mount
	}
	return ms
}

// inJobRoot runs fn on a thread of its own (onMountNSThread), in a new
// mount namespace (a slave of the host's: host mounts still propagate in,
// nothing goes out) where rootfs holds the job's root: a tmpfs with the
// view's links and binds (all of them unless bindsByRunc, which leaves
// the binds to runc: tests compare the two). fn starts runc's init, which
// inherits the namespace; the namespace goes when the thread leaves it.
func inJobRoot(rootfs string, view *viewPlan, bindsByRunc bool, fn func() error) error {
	enter := func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("preparing the job's root: unshare: %w", err)
		}
		return nil
	}
	return onMountNSThread(enter, func() error {
		if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("preparing the job's root: %w", err)
		}
		if err := mountView(rootfs, view, bindsByRunc); err != nil {
			return err
		}
		return fn()
	})
}

// onMountNSThread runs fn on a locked thread that enter moved into
// another mount namespace. The thread is never handed back to Go: it
// returns to the host's namespace and ends with its goroutine. Back in
// the host's namespace first, because should it be the main thread Go
// parks it instead of ending it, and the other namespace would live on
// with it.
func onMountNSThread(enter, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		host, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("the host's mount namespace: %w", err)
			return
		}
		defer unix.Close(host)
		if err := enter(); err != nil {
			errc <- err
			return
		}
		defer unix.Setns(host, unix.CLONE_NEWNS)
		errc <- fn()
	}()
	return <-errc
}

// mountView puts a small tmpfs on rootfs, then the view's links and binds
// in it. The tmpfs holds only the mount points and the links: on disk
// they would be some thirty inodes made and freed per job, and on an ext4
// without a journal each allocation scans past the recently freed ones
// (11% of all CPU samples in the end-to-end benchmark, perf;
// docs/benchmarks.md).
func mountView(rootfs string, v *viewPlan, bindsByRunc bool) error {
	if err := unix.Mount("tmpfs", rootfs, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
		"mode=755,size=1m,nr_inodes=4096"); err != nil {
		return fmt.Errorf("mounting the job's root: %w", err)
	}
	for _, l := range v.links {
		if err := os.Symlink(l.target, filepath.Join(rootfs, l.name)); err != nil {
			return fmt.Errorf("recreating /%s in the rootfs: %w", l.name, err)
		}
	}
	if bindsByRunc {
		return nil
	}
	for _, b := range v.binds {
		if err := bindView(rootfs, b); err != nil {
			return fmt.Errorf("binding %s into the job's root: %w", b.mount.Source, err)
		}
	}
	return nil
}

// bindView clones b's source with everything mounted below it, makes the
// clone read-only (and nosuid, nodev) all through before it is attached
// anywhere, and attaches it at its place in rootfs, as runc's recursive
// bind with recursive attributes would.
func bindView(rootfs string, b viewBind) error {
	dst := filepath.Join(rootfs, b.mount.Destination)
	if b.dir {
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
	} else if f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err != nil {
		return err
	} else if err := f.Close(); err != nil {
		return err
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, b.mount.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(fd)
	if b.mount.RecAttr == nil {
		return errors.New("a host view bind without attributes")
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, b.mount.RecAttr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
