package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Mode is the shape of the host's cgroup hierarchy.
type Mode int

const (
	// ModeV1 has only v1 controller hierarchies.
	ModeV1 Mode = iota + 1
	// ModeHybrid has v1 controller hierarchies plus a cgroup2 mount
	// (usually /sys/fs/cgroup/unified) that holds few or no controllers.
	ModeHybrid
	// ModeV2 is the unified hierarchy only.
	ModeV2
)

func (m Mode) String() string {
	switch m {
	case ModeV1:
		return "v1"
	case ModeHybrid:
		return "hybrid"
	case ModeV2:
		return "v2"
	}
	return "unknown"
}

// Hierarchy is one mounted v1 hierarchy.
type Hierarchy struct {
	// Controllers are the comounted controllers ("cpu", "cpuacct") or a
	// named hierarchy ("name=systemd").
	Controllers []string
	Mountpoint  string
	// Own is the absolute directory of the detecting process's cgroup.
	Own string
	// Root is the cgroup the mount shows at Mountpoint, as
	// /proc/<pid>/cgroup names cgroups ("/" but for a bind of a
	// sub-cgroup).
	Root string
}

// Host is the cgroup layout as seen by the process that detected it.
type Host struct {
	Mode Mode
	// V1 lists the v1 hierarchies (ModeV1 and ModeHybrid).
	V1 []Hierarchy
	// Unified is the cgroup2 mountpoint ("" on ModeV1).
	Unified string
	// UnifiedOwn is the absolute directory of the process's cgroup2 cgroup.
	UnifiedOwn string
	// UnifiedRoot is the cgroup2 mount's Root (Hierarchy.Root).
	UnifiedRoot string
	// Domain is, on ModeV2 after Prepare, the directory jobs nest under.
	Domain string
}

// Detect reads the calling thread's mountinfo and /proc/self/cgroup. It
// reads /proc/thread-self/mountinfo on a locked thread: in a process that
// has started a container the main thread may sit in that container's
// mount namespace (see container.OpenMountinfo).
func Detect() (*Host, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mi, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer mi.Close()
	cg, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer cg.Close()
	return DetectFrom(mi, cg)
}

// mount is the part of a mountinfo line this package needs.
type mount struct {
	root, mountpoint, fstype string
	superOpts                []string
}

// DetectFrom derives the layout from the text of a mountinfo file and a
// /proc/<pid>/cgroup file.
func DetectFrom(mountinfo, selfCgroup io.Reader) (*Host, error) {
	mounts, err := parseMountinfo(mountinfo)
	if err != nil {
		return nil, err
	}
	own, err := parseProcCgroup(selfCgroup)
	if err != nil {
		return nil, err
	}
	h := &Host{}
	seen := map[string]bool{}
	for _, m := range mounts {
		switch m.fstype {
		case "cgroup2":
			if h.Unified != "" {
				continue // the first mount wins, as in the cgroups library
			}
			p, ok := own[""]
			if !ok {
				return nil, fmt.Errorf("cgroup2 is mounted at %s but /proc/self/cgroup has no 0:: line", m.mountpoint)
			}
			h.Unified, h.UnifiedRoot = m.mountpoint, m.root
			h.UnifiedOwn, err = ownDir(m, p)
			if err != nil {
				return nil, err
			}
		case "cgroup":
			ctrls := v1Controllers(m.superOpts)
			if len(ctrls) == 0 || seen[ctrls[0]] {
				continue
			}
			key := strings.Join(ctrls, ",")
			p, ok := own[key]
			if !ok {
				return nil, fmt.Errorf("cgroup hierarchy %s (%s) is not listed in /proc/self/cgroup", m.mountpoint, key)
			}
			dir, err := ownDir(m, p)
			if err != nil {
				return nil, err
			}
			for _, c := range ctrls {
				seen[c] = true
			}
			h.V1 = append(h.V1, Hierarchy{Controllers: ctrls, Mountpoint: m.mountpoint, Own: dir, Root: m.root})
		}
	}
	switch {
	case len(h.V1) > 0 && h.Unified != "":
		h.Mode = ModeHybrid
	case len(h.V1) > 0:
		h.Mode = ModeV1
	case h.Unified != "":
		h.Mode = ModeV2
	default:
		return nil, errors.New("no cgroup file system is mounted (looked for cgroup and cgroup2 in mountinfo)")
	}
	return h, nil
}

// v1Controllers picks controller names out of a v1 mount's super options.
func v1Controllers(opts []string) []string {
	var out []string
	for _, o := range opts {
		switch {
		case strings.HasPrefix(o, "name="):
			out = append(out, o)
		case o == "rw" || o == "ro" || strings.Contains(o, "=") || o == "noprefix" ||
			o == "clone_children" || o == "xattr" || o == "cpuset_v2_mode" || o == "favordynmods":
		default:
			out = append(out, o)
		}
	}
	return out
}

// ownDir maps a cgroup path from /proc/self/cgroup onto the mount, whose
// root may itself be a sub-cgroup (bind mounts, cgroup namespaces).
func ownDir(m mount, cgPath string) (string, error) {
	rel, err := filepath.Rel(m.root, cgPath)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("own cgroup %s lies outside the root %s of the mount at %s", cgPath, m.root, m.mountpoint)
	}
	return filepath.Join(m.mountpoint, rel), nil
}

func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+4 {
			continue
		}
		out = append(out, mount{
			root:       unescapeOctal(f[3]),
			mountpoint: unescapeOctal(f[4]),
			fstype:     f[sep+1],
			superOpts:  strings.Split(f[sep+3], ","),
		})
	}
	return out, sc.Err()
}

// parseProcCgroup maps "controller list" (as written, e.g. "cpu,cpuacct",
// "name=systemd", "" for cgroup2) to the cgroup path.
func parseProcCgroup(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		out[parts[1]] = parts[2]
	}
	if len(out) == 0 {
		return nil, errors.New("/proc/self/cgroup is empty")
	}
	return out, sc.Err()
}

// unescapeOctal undoes mountinfo's \040-style escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Controller returns the hierarchy holding a v1 controller.
func (h *Host) Controller(name string) (Hierarchy, bool) {
	for _, hi := range h.V1 {
		for _, c := range hi.Controllers {
			if c == name {
				return hi, true
			}
		}
	}
	return Hierarchy{}, false
}
