package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"golang.org/x/sys/unix"
)

// reservedTargets are container paths a --mount may not cover: the
// container's own file systems and corral-init.
var reservedTargets = []string{"/proc", "/sys", "/dev", "/.corral"}

// MountBinds checks the job's --mount requests and returns their binds.
// Each source must lie under one of roots (the administrator's list) and
// is opened as the job's user, beneath its root: the user needs read
// access to it (and write access by its mode bits for a writable mount),
// and a ".." or a symlink that leads out of the root is refused. The
// bind uses the path the kernel resolved, and container.Start makes sure
// that what it mounts is the file checked.
func MountBinds(id Identity, roots []string, ms []api.Mount) ([]container.Bind, error) {
	var out []container.Bind
	for _, m := range ms {
		b, err := mountBind(id, roots, m)
		if err != nil {
			return nil, fmt.Errorf("--mount %s:%s: %w", m.Source, m.Target, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func mountBind(id Identity, roots []string, m api.Mount) (container.Bind, error) {
	if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
		return container.Bind{}, errors.New("paths must be absolute")
	}
	target := filepath.Clean(m.Target)
	for _, r := range reservedTargets {
		if target == "/" || under(target, r) {
			return container.Bind{}, fmt.Errorf("%s is reserved for the container itself", target)
		}
	}
	if strings.Contains(m.Source, "/../") || strings.HasSuffix(m.Source, "/..") {
		return container.Bind{}, errors.New("'..' is not allowed in a mount source")
	}
	src := filepath.Clean(m.Source)
	root := ""
	for _, r := range roots {
		if r = filepath.Clean(r); under(src, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" {
		if len(roots) == 0 {
			return container.Bind{}, errors.New("this node allows no mounts (the administrator lists the roots with --mount-root)")
		}
		return container.Bind{}, fmt.Errorf("not under an allowed root (%s)", strings.Join(roots, ", "))
	}
	rel, _ := filepath.Rel(root, src)
	var resolved string
	var checked *container.FileID
	// The root itself is the administrator's (opened as root); the path
	// beneath it is the user's.
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return container.Bind{}, fmt.Errorf("allowed root %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	err = AsUser(id, func() error {
		fd, err := unix.Openat2(rootFD, rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case errors.Is(err, unix.EXDEV):
			return fmt.Errorf("%s leads out of %s", src, root)
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return fmt.Errorf("user %d may not read %s", id.UID, src)
		case err != nil:
			return fmt.Errorf("%s: %w", src, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if !m.ReadOnly && !mayWrite(id, &st) {
			return fmt.Errorf("user %d may not write %s (mount it :ro)", id.UID, src)
		}
		checked = container.IDOf(&st)
		resolved, err = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		return err
	})
	if err != nil {
		return container.Bind{}, err
	}
	if !under(resolved, root) {
		return container.Bind{}, fmt.Errorf("%s leads out of %s", src, root)
	}
	return container.Bind{Source: resolved, Dest: target, Writable: !m.ReadOnly, Checked: checked}, nil
}

// mayWrite applies the mode bits as the kernel would for id (ACLs aside):
// access(2) checks the real, not the file-system, identity.
func mayWrite(id Identity, st *unix.Stat_t) bool {
	switch {
	case id.UID == 0:
		return true
	case st.Uid == id.UID:
		return st.Mode&0o200 != 0
	case st.Gid == id.GID || contains(id.Groups, st.Gid):
		return st.Mode&0o020 != 0
	}
	return st.Mode&0o002 != 0
}

func contains(xs []uint32, x uint32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// under reports whether p is dir or lies below it (both clean).
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
