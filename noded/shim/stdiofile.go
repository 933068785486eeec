package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// What a job's stdin, stdout and stderr may be, and how they are opened.
// openStdioFile runs on the user's thread (AsUser), so the kernel applies
// the user's permissions; the rules below add what permissions alone do
// not cover, because the shim is not the user at a shell: it opens the
// file unattended, on a name another user may have prepared.
//
//   - Regular files and /dev/null only. A FIFO would block the open (or
//     the job) until someone opens the other end, and let that someone read
//     the output; a terminal, socket or other device has no place as a
//     batch job's file. Slurm users name /dev/null; nothing else is
//     known to be relied on. The open is O_NONBLOCK (a FIFO fails with
//     ENXIO or opens at once instead of waiting for a peer) and the kind
//     is checked before the open, so a FIFO or device is not even opened,
//     and again on the open file, so a swap in between is caught.
//   - A symlink as the last component is followed only if the job's user
//     or root owns it (each link of a chain, at most maxStdioLinks). Slurm
//     follows any symlink, which in a directory others can write (a shared
//     sticky scratch, or the job's default "corral-%j.out" there) lets
//     another user point the job's output at the user's own files, to be
//     truncated, like the kernel's fs.protected_symlinks rule but for every
//     directory, since it need not be enabled. Links in the directories of
//     the path are followed: the user named those directories. The final
//     open is O_NOFOLLOW, so a link planted after the check fails it.
//   - An output file that already exists in a sticky directory others can
//     write must be the user's or the directory owner's, with one link:
//     otherwise another user made it there, to read the job's output or to
//     have the job truncate one of the user's own files through a hard
//     link. This is fs.protected_regular=2, again whatever the sysctl says.
//
// The file is handed to the job as it is: nothing here or later changes
// its owner, mode or ACL (see the stdio fds in container/initproto).
const maxStdioLinks = 8

// stdioFlags are the open(2) flags of one kind of job file.
type stdioFlags struct {
	flags  int  // O_RDONLY, or O_WRONLY|O_CREAT with O_TRUNC or O_APPEND
	output bool // the sticky-directory rule applies
}

var (
	inputFlags    = stdioFlags{flags: unix.O_RDONLY}
	truncateFlags = stdioFlags{flags: unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC, output: true}
	appendFlags   = stdioFlags{flags: unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND, output: true}
)

// ErrRefused marks a file the rules above refuse (as opposed to one the
// kernel would not open for the user).
var ErrRefused = errors.New("refused")

// OpenForReading opens a job's file (its output, for `corral log`) to
// be read by the user uid, under the same rules as the job's input: the
// reader is root acting for the user, on a name the user or another user
// may have swapped since the job wrote it. Call it as the user (AsUser).
func OpenForReading(path string, uid uint32) (*os.File, error) {
	return openStdioFile(path, inputFlags, uid)
}

// openStdioFile opens path (absolute, clean) for the user uid under the
// rules above. Call it as the user. A link's target is resolved from the
// link's own directory (an fd), as the kernel would, not lexically.
func openStdioFile(path string, how stdioFlags, uid uint32) (*os.File, error) {
	dir, base := filepath.Split(path)
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for links := 0; ; links++ {
		if base == "" {
			unix.Close(dfd)
			return nil, fmt.Errorf("%w: it is a directory", ErrRefused)
		}
		target, f, err := openIn(dfd, base, how, uid)
		if err != nil || f != nil {
			unix.Close(dfd)
			return f, err
		}
		if links == maxStdioLinks {
			unix.Close(dfd)
			return nil, unix.ELOOP
		}
		tdir, tbase := filepath.Split(target)
		if tdir == "" {
			tdir = "."
		}
		// Openat ignores dfd for an absolute tdir.
		next, err := unix.Openat(dfd, tdir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(dfd)
		if err != nil {
			return nil, err
		}
		dfd, base = next, tbase
	}
}

// openIn opens base in the directory dfd, or returns the target of the
// symlink base is when that link may be followed.
func openIn(dfd int, base string, how stdioFlags, uid uint32) (link string, f *os.File, err error) {
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT) && how.output: // created below
	case err != nil:
		return "", nil, err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return readTrustedLink(dfd, base, uid)
	default:
		if err := checkStdioFile(dfd, &st, how, uid); err != nil {
			return "", nil, err
		}
	}
	// 0666 less the job's umask, as slurmstepd creates output files: the
	// default umask 0022 gives 0644, a group-writable umask 0002 gives 0664.
	fd, err := unix.Openat(dfd, base, how.flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0o666)
	switch {
	case errors.Is(err, unix.ELOOP):
		return "", nil, fmt.Errorf("%w: it became a symlink while being opened", ErrRefused)
	case errors.Is(err, unix.ENXIO): // a FIFO with no reader, made after the check
		return "", nil, fmt.Errorf("%w: it is a FIFO, not a regular file", ErrRefused)
	case err != nil:
		return "", nil, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return "", nil, err
	}
	if err := checkStdioFile(dfd, &st, how, uid); err != nil {
		unix.Close(fd)
		return "", nil, err
	}
	// Back to blocking I/O for the job (only the open had to be
	// non-blocking; regular files ignore the flag, /dev/null too).
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return "", nil, err
	}
	return "", os.NewFile(uintptr(fd), base), nil
}

// readTrustedLink returns the target of the symlink base in dfd if uid or
// root owns it. The link is opened itself (O_PATH|O_NOFOLLOW) so that
// the owner checked and the target read are those of one inode.
func readTrustedLink(dfd int, base string, uid uint32) (string, *os.File, error) {
	lfd, err := unix.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	defer unix.Close(lfd)
	var st unix.Stat_t
	if err := unix.Fstat(lfd, &st); err != nil {
		return "", nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", nil, fmt.Errorf("%w: it was replaced while being opened", ErrRefused)
	}
	if st.Uid != uid && st.Uid != 0 {
		return "", nil, fmt.Errorf("%w: it is a symlink owned by uid %d, neither the job's user nor root", ErrRefused, st.Uid)
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(lfd, "", buf)
	if err != nil {
		return "", nil, err
	}
	return string(buf[:n]), nil, nil
}

// checkStdioFile applies the kind and sticky-directory rules to st, a
// file in the directory dfd.
func checkStdioFile(dfd int, st *unix.Stat_t, how stdioFlags, uid uint32) error {
	switch kind := st.Mode & unix.S_IFMT; {
	case kind == unix.S_IFCHR && isDevNull(st):
		return nil
	case kind == unix.S_IFDIR:
		return fmt.Errorf("%w: it is a directory", ErrRefused)
	case kind != unix.S_IFREG:
		return fmt.Errorf("%w: it is %s, not a regular file (only regular files and /dev/null are allowed)", ErrRefused, kindName(kind))
	}
	if !how.output {
		return nil
	}
	var dir unix.Stat_t
	if err := unix.Fstat(dfd, &dir); err != nil {
		return err
	}
	switch {
	case !isStickyShared(&dir):
		return nil
	case st.Uid != uid && st.Uid != dir.Uid:
		return fmt.Errorf("%w: it belongs to uid %d, in a sticky directory others can write", ErrRefused, st.Uid)
	case st.Nlink > 1:
		return fmt.Errorf("%w: it has %d hard links, in a sticky directory others can write", ErrRefused, st.Nlink)
	}
	return nil
}

// isStickyShared: a sticky directory writable by its group or by all.
func isStickyShared(dir *unix.Stat_t) bool {
	return dir.Mode&unix.S_ISVTX != 0 && dir.Mode&0o022 != 0
}

// isDevNull is the null device (major 1, minor 3), wherever its node is.
func isDevNull(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3
}

func kindName(kind uint32) string {
	switch kind {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return "a special file"
}
