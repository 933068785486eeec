package container

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// RemoveTree removes dir and everything below it, but refuses when
// anything at or below dir is a mount point in this mount namespace:
// os.RemoveAll crosses mount points, and a job's binds (its work
// directory, its home) must never be emptied by a cleanup.
func RemoveTree(dir string) error {
	dir = filepath.Clean(dir)
	if dir == "/" || dir == "." || !filepath.IsAbs(dir) {
		return fmt.Errorf("refusing to remove %q", dir)
	}
	// A file or an empty directory (a job's script, its rootfs once the
	// container is gone) goes in one call, without reading the mount
	// table: the kernel refuses it (EBUSY) for a mount point, and an empty
	// directory has nothing mounted below it.
	switch err := os.Remove(dir); {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.EBUSY):
		return err
	}
	if m, err := mountUnder(dir); err != nil {
		return err
	} else if m != "" {
		return fmt.Errorf("refusing to remove %s: %s is mounted", dir, m)
	}
	return os.RemoveAll(dir)
}

// mountUnder returns a mount point at or below dir, "" if there is none.
func mountUnder(dir string) (string, error) {
	f, unlock, err := OpenMountinfo()
	if err != nil {
		return "", err
	}
	defer unlock()
	defer f.Close()
	resolved := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		resolved = r
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescape(fields[4])
		for _, d := range []string{dir, resolved} {
			if mp == d || strings.HasPrefix(mp, d+"/") {
				return mp, nil
			}
		}
	}
	return "", sc.Err()
}

func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// OpenMountinfo opens the calling thread's mountinfo and locks the
// goroutine to that thread until unlock is called.
//
// /proc/self/mountinfo is wrong in a process that started a container:
// libcontainer runs a goroutine that setns(2)es into the container's mount
// namespace on a locked thread that it never unlocks; if that thread was
// the main thread, Go parks it instead of ending it, and /proc/self
// (which follows the main thread) then shows the container's, by then
// dead, mount namespace. Every other thread is still in the host's.
func OpenMountinfo() (f *os.File, unlock func(), err error) {
	runtime.LockOSThread()
	f, err = os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, nil, err
	}
	return f, runtime.UnlockOSThread, nil
}

// KeepMainThread locks the calling goroutine (call it from main or
// TestMain, before anything else) to the main thread for good, so that
// libcontainer's namespace-switching goroutines never land there. See
// OpenMountinfo.
func KeepMainThread() { runtime.LockOSThread() }
