package shim

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Identity is whom a job runs as.
type Identity struct {
	UID, GID uint32
	Groups   []uint32
	// Umask, if set, is the umask of what fn creates (the job's output
	// files): the thread unshares its file-system attributes (CLONE_FS)
	// so that the mask is its own, not the whole shim's.
	Umask *uint32
}

// AsUser runs fn with the file-system identity of id: on a fresh OS thread
// whose supplementary groups, fsgid and fsuid are switched with raw
// syscalls, which on Linux change only the calling thread (Go's own
// syscall.Setgroups would change every thread). Switching fsuid away from
// 0 also drops the thread's DAC-override capabilities, so fn sees exactly
// the user's permissions. The goroutine never unlocks the thread, so the
// runtime discards it afterwards and no other goroutine ever runs with
// the user's identity.
func AsUser(id Identity, fn func() error) error {
	if id.UID == 0 && id.Umask == nil {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread dies with this goroutine.
		if err := setThreadIdentity(id); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

func setThreadIdentity(id Identity) error {
	if id.Umask != nil {
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare(CLONE_FS): %w", err)
		}
		unix.Umask(int(*id.Umask))
	}
	if id.UID == 0 {
		return nil
	}
	groups := make([]uint32, len(id.Groups))
	copy(groups, id.Groups)
	var ptr unsafe.Pointer
	if len(groups) > 0 {
		ptr = unsafe.Pointer(&groups[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(ptr), 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	unix.RawSyscall(unix.SYS_SETFSGID, uintptr(id.GID), 0, 0)
	unix.RawSyscall(unix.SYS_SETFSUID, uintptr(id.UID), 0, 0)
	// setfs[ug]id report no errors; asking again (-1 changes nothing)
	// returns the current value.
	gotGID, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
	gotUID, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
	if uint32(gotUID) != id.UID || uint32(gotGID) != id.GID {
		return fmt.Errorf("could not take the file-system identity %d:%d (got %d:%d)", id.UID, id.GID, gotUID, gotGID)
	}
	return nil
}
