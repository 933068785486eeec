//go:build !slurmonly

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroup2Root is where the unified hierarchy is mounted.
const cgroup2Root = "/sys/fs/cgroup"

// devControllers are what a node daemon needs available in the cgroup it
// starts in on cgroup v2 (cgroup.Host.Prepare); cpuset is enabled when
// the host has it.
var devControllers = []string{"memory", "cpu", "pids", "cpuset"}

// devCgroups gives each node daemon of `corral dev` a cgroup of its own
// on a pure cgroup v2 host. noded moves itself into a leaf of the cgroup
// it starts in and enables its jobs' controllers there, which the kernel
// allows only while that cgroup holds no other process: under systemd a
// unit with Delegate=yes gives it one, but `corral dev` starts noded next
// to itself, ctld and whatever shell ran it. So the daemons start in
// <root>/corral-dev.<pid>/<node> instead, made here and removed at exit
// as far as nothing runs in them any more. On v1 and hybrid hosts noded
// makes its jobs' cgroups itself and this is not used.
type devCgroups struct {
	dir string // <root>/corral-dev.<pid>
}

// newDevCgroups prepares the parent of the daemons' cgroups under root
// (the cgroup2 mount), or returns nil when root is not a pure v2 mount.
func newDevCgroups(root string) (*devCgroups, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, nil // v1 or hybrid: noded manages its own cgroups
	}
	return makeDevCgroups(root, os.Getpid())
}

// makeDevCgroups makes <root>/corral-dev.<pid> with the daemons'
// controllers available in it and enabled for its children. The root
// cgroup may both hold processes and enable controllers; the new cgroup
// holds none, so its children can have them too.
func makeDevCgroups(root string, pid int) (*devCgroups, error) {
	avail, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	have := strings.Fields(string(avail))
	var enable []string
	for i, c := range devControllers {
		switch {
		case slices.Contains(have, c):
			enable = append(enable, "+"+c)
		case i < 3:
			return nil, fmt.Errorf("cgroup v2: the %s controller is not available at %s: noded needs memory, cpu and pids", c, root)
		}
	}
	line := strings.Join(enable, " ")
	if err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte(line), 0o644); err != nil {
		return nil, fmt.Errorf("cgroup v2: enabling %s in %s (corral dev must run as root on a v2 host): %v", line, root, err)
	}
	dir := filepath.Join(root, "corral-dev."+strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(line), 0o644); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup v2: enabling %s in %s: %v", line, dir, err)
	}
	return &devCgroups{dir: dir}, nil
}

// forNode makes the cgroup node's daemon starts in and opens it, for
// starting the daemon directly inside it (clone3 with CLONE_INTO_CGROUP).
// A nil receiver is a host where no cgroup is needed: (nil, nil).
func (g *devCgroups) forNode(node string) (*os.File, error) {
	if g == nil {
		return nil, nil
	}
	dir := filepath.Join(g.dir, node)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	return f, nil
}

// remove deletes the daemons' cgroups, deepest first, once their
// processes are gone; a job still running under its shim (noded leaves
// them when it stops) keeps its own and its ancestors, which is said.
func (g *devCgroups) remove() error {
	if g == nil {
		return nil
	}
	var dirs []string
	_ = filepath.WalkDir(g.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	var left []string
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			left = append(left, d)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("cgroups left (jobs still run in them?): %s", strings.Join(left, " "))
	}
	return nil
}
