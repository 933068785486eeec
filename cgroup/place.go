package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// JobName is the directory name of a job's cgroup. The node name keeps two
// noded on one host apart.
func JobName(node string, jobID uint64) string {
	return "corral-" + node + "-job" + strconv.FormatUint(jobID, 10)
}

// SpareName is the directory name of the cgroup a spare shim prepares a
// container in, before any job (noded/shim.Preparation). A job that adopts
// that container keeps it: cgroup v2 cannot rename a cgroup, so the name
// is recorded in the job's launch.json and read back from there.
func SpareName(node, token string) string {
	return "corral-" + node + "-spare" + token
}

// LeafName is the v2 leaf noded moves itself into.
func LeafName(node string) string { return "corral-" + node + ".noded" }

// isLeafName says whether a cgroup's name is one LeafName makes.
func isLeafName(name string) bool {
	return strings.HasPrefix(name, "corral-") && strings.HasSuffix(name, ".noded") && len(name) > len("corral-.noded")
}

// Placement says where one job's cgroup lives.
type Placement struct {
	// Path is the value for cgroups.Cgroup.Path.
	Path string
	// Dirs maps each controller ("" for cgroup2) to the absolute directory
	// libcontainer's manager will create for it.
	Dirs map[string]string
}

// Job returns the placement of a job's cgroup under its own name
// (JobName). On ModeV2, Prepare must have run first.
func (h *Host) Job(node string, jobID uint64) (Placement, error) {
	return h.Place(JobName(node, jobID))
}

// Place returns the placement of a cgroup named name (JobName or
// SpareName) where jobs live. On ModeV2, Prepare must have run first.
func (h *Host) Place(name string) (Placement, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return Placement{}, fmt.Errorf("cgroup name %q is not one directory name", name)
	}
	p := Placement{Dirs: map[string]string{}}
	switch h.Mode {
	case ModeV1, ModeHybrid:
		p.Path = name
		for _, hi := range h.V1 {
			for _, c := range hi.Controllers {
				p.Dirs[c] = filepath.Join(hi.Own, name)
			}
		}
		if h.Mode == ModeHybrid {
			p.Dirs[""] = filepath.Join(h.Unified, name)
		}
	case ModeV2:
		if h.Domain == "" {
			return Placement{}, errors.New("cgroup v2: Prepare has not run, so there is no cgroup to nest jobs under")
		}
		rel, err := filepath.Rel(h.Unified, h.Domain)
		if err != nil || strings.HasPrefix(rel, "..") {
			return Placement{}, fmt.Errorf("cgroup v2: %s is not under %s", h.Domain, h.Unified)
		}
		p.Path = filepath.Join("/", rel, name)
		p.Dirs[""] = filepath.Join(h.Domain, name)
	default:
		return Placement{}, fmt.Errorf("unknown cgroup mode %d", h.Mode)
	}
	return p, nil
}

// Controllers noded enables for its jobs on v2; the first three are required.
var v2Controllers = []string{"memory", "cpu", "pids", "cpuset"}

// Prepare readies the host for job cgroups. On v1 and hybrid it checks that
// the controllers jobs need are mounted. On v2 it moves this process (only
// this one) into the leaf <own>/<leaf> and enables the controllers jobs need
// in <own>/cgroup.subtree_control; jobs then nest under <own>. If this
// process already sits in a noded leaf (a restart by exec, or an earlier
// daemon of the same process under another name, as in tests), its parent
// is used.
func (h *Host) Prepare(leaf string) error {
	switch h.Mode {
	case ModeV1, ModeHybrid:
		var missing []string
		for _, c := range []string{"memory", "cpu", "cpuacct", "cpuset", "pids", "devices"} {
			if _, ok := h.Controller(c); !ok {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("cgroup %s: controllers %s are not mounted", h.Mode, strings.Join(missing, ", "))
		}
		return nil
	case ModeV2:
	default:
		return fmt.Errorf("unknown cgroup mode %d", h.Mode)
	}
	domain := h.UnifiedOwn
	if isLeafName(filepath.Base(domain)) || filepath.Base(domain) == leaf {
		domain = filepath.Dir(domain)
	}
	if domain == h.Unified {
		return fmt.Errorf("cgroup v2: noded runs in the root cgroup; start it in a cgroup of its own (e.g. a systemd unit with Delegate=yes)")
	}
	avail, err := os.ReadFile(filepath.Join(domain, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	have := map[string]bool{}
	for _, c := range strings.Fields(string(avail)) {
		have[c] = true
	}
	var enable, missing []string
	for i, c := range v2Controllers {
		switch {
		case have[c]:
			enable = append(enable, "+"+c)
		case i < 3:
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cgroup v2: controllers %s are not available in %s; enable them in its parent's cgroup.subtree_control (systemd: Delegate=yes)",
			strings.Join(missing, ", "), domain)
	}
	leafDir := filepath.Join(domain, leaf)
	if err := os.Mkdir(leafDir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	if err := writeFile(leafDir, "cgroup.procs", strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("cgroup v2: moving noded into %s: %w", leafDir, err)
	}
	if err := writeFile(domain, "cgroup.subtree_control", strings.Join(enable, " ")); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cgroup v2: cannot enable %s in %s: it still holds processes other than noded; run noded in a cgroup of its own (e.g. a systemd unit with Delegate=yes)",
				strings.Join(enable, " "), domain)
		}
		return fmt.Errorf("cgroup v2: enabling controllers in %s: %w", domain, err)
	}
	h.Domain = domain
	h.UnifiedOwn = leafDir
	return nil
}

// SwapAccounted reports whether the kernel lets a memory+swap total be set
// for jobs (v1: memory.memsw.*; v2: memory.swap.max, which the library
// silently skips when absent, so v2 always reports true).
func (h *Host) SwapAccounted() bool {
	if h.Mode == ModeV2 {
		return true
	}
	mem, ok := h.Controller("memory")
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(mem.Own, "memory.memsw.limit_in_bytes"))
	return err == nil
}

// writeFile writes a cgroup control file. O_CREATE only matters for the fake
// trees tests use: cgroupfs has every control file already.
func writeFile(dir, name, data string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
