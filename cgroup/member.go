package cgroup

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// Member says how a process inside a job's cgroup shows in
// /proc/<pid>/cgroup: on the line whose controller list is Key ("" for
// cgroup2), a path that is Path or lies below it.
type Member struct {
	Key, Path string
}

// memberController is the v1 hierarchy a job's membership is read in:
// every job is limited by memory, so its cgroup exists there.
const memberController = "memory"

// MemberOf is how processes of the job placed at p show in
// /proc/<pid>/cgroup, as read by a process in the detecting process's
// cgroup namespace.
func (h *Host) MemberOf(p Placement) (Member, error) {
	switch h.Mode {
	case ModeV2:
		return memberAt("", h.Unified, h.UnifiedRoot, p.Dirs[""])
	case ModeV1, ModeHybrid:
		for _, hi := range h.V1 {
			if slices.Contains(hi.Controllers, memberController) {
				return memberAt(strings.Join(hi.Controllers, ","), hi.Mountpoint, hi.Root, p.Dirs[memberController])
			}
		}
		return Member{}, errors.New("no v1 memory hierarchy is mounted")
	}
	return Member{}, fmt.Errorf("unknown cgroup mode %d", h.Mode)
}

func memberAt(key, mountpoint, root, dir string) (Member, error) {
	rel, err := filepath.Rel(mountpoint, dir)
	if dir == "" || err != nil || strings.HasPrefix(rel, "..") {
		return Member{}, fmt.Errorf("job cgroup %q is not under the mount at %s", dir, mountpoint)
	}
	if root == "" {
		root = "/"
	}
	return Member{Key: key, Path: filepath.Join(root, rel)}, nil
}

// Holds reports whether the /proc/<pid>/cgroup text procCgroup puts the
// process in m's cgroup or one below it. The comparison is of whole
// path components: a sibling named like a prefix is not inside.
func (m Member) Holds(procCgroup io.Reader) (bool, error) {
	cgs, err := parseProcCgroup(procCgroup)
	if err != nil {
		return false, err
	}
	p, ok := cgs[m.Key]
	if !ok {
		return false, nil
	}
	p = filepath.Clean(p)
	return p == m.Path || strings.HasPrefix(p, strings.TrimSuffix(m.Path, "/")+"/"), nil
}
