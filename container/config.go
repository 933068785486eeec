package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"golang.org/x/sys/unix"
)

// Bind is a host path made visible in the container at the same or another
// path.
type Bind struct {
	Source   string
	Dest     string
	Writable bool
	// Checked, if set, is the file the caller checked Source to be (as
	// the user): Start refuses to run the job when what is mounted at
	// Dest is another (checkBinds).
	Checked *FileID
}

// FileID is a file's identity: its device and inode numbers.
type FileID struct{ Dev, Ino uint64 }

// IDOf is st's identity.
func IDOf(st *unix.Stat_t) *FileID { return &FileID{Dev: st.Dev, Ino: st.Ino} }

// Spec describes one job container.
type Spec struct {
	// ID names the container in StateRoot (letters, digits, _ + - .).
	ID        string
	StateRoot string
	// Rootfs is an empty directory for the job's view of the host; it is
	// removed by Destroy.
	Rootfs string
	// Binds are mounted over the host view, shallowest destination first.
	Binds []Bind
	// Hide lists host paths masked inside the container.
	Hide     []string
	ShmBytes int64

	// Image, if set, replaces the read-only host view with the image's
	// root file system under a private writable layer (see Image).
	Image *Image

	// CgroupPath and Resources go to libcontainer's cgroup manager
	// (package cgroup computes both); device rules are added here.
	CgroupPath string
	Resources  *cgroups.Resources
	// Devices are host devices the job may use besides the standard ones
	// (null, zero, tty, ...): its GPUs.
	Devices []Device

	Args, Env      []string
	Cwd            string
	UID, GID       int
	Umask          *uint32 // the job's processes' umask; nil: 0022
	Groups         []int
	Stdout, Stderr *os.File
	Stdin          *os.File // nil: /dev/null
	ExtraFiles     []*os.File
	// Stop, when it closes while the container is being set up, ends the
	// setup: Start kills what is in the job's cgroup (runc's init, which
	// may be waiting in a bind mount of a file system that does not
	// answer) and returns ErrStopped.
	Stop             <-chan struct{}
	hostRootOverride string // tests: list this directory instead of "/"
	bindsByRunc      bool   // tests: runc binds the host view, as it once did

}

// DefaultShmBytes is /dev/shm's size when the job asks for none.
const DefaultShmBytes = 64 << 20

// skipAtRoot are the host's top-level entries the job never sees as they
// are: they are replaced by the container's own.
var skipAtRoot = map[string]bool{"proc": true, "sys": true, "dev": true, "tmp": true}

const (
	defaultMountFlags = unix.MS_NOEXEC | unix.MS_NOSUID | unix.MS_NODEV
	hostViewAttrs     = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
)

// hostView plans the job's view of the host: the host's top-level
// symlinks recreated, and one recursive read-only bind per other
// top-level entry (mountView makes both). Entries holding a hidden path
// or the rootfs itself come first, so that their recursive copy does not
// drag in the mounts already made inside this very rootfs.
func hostView(hostRoot, rootfs string, hide []string) (*viewPlan, error) {
	ents, err := os.ReadDir(hostRoot)
	if err != nil {
		return nil, err
	}
	plan := &viewPlan{}
	var first, rest []viewBind
	for _, e := range ents {
		name := e.Name()
		if skipAtRoot[name] {
			continue
		}
		src := filepath.Join(hostRoot, name)
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return nil, err
			}
			plan.links = append(plan.links, viewLink{name: name, target: target})
			continue
		}
		if !e.IsDir() && !e.Type().IsRegular() {
			continue // sockets, fifos, devices at the top level are not shared
		}
		b := viewBind{dir: e.IsDir(), mount: &configs.Mount{
			Source:      src,
			Destination: "/" + name,
			Device:      "bind",
			Flags:       unix.MS_BIND | unix.MS_REC,
			RecAttr:     &unix.MountAttr{Attr_set: hostViewAttrs},
		}}
		if holdsAny("/"+name, append([]string{rootfs}, hide...)) {
			first = append(first, b)
		} else {
			rest = append(rest, b)
		}
	}
	plan.binds = append(first, rest...)
	return plan, nil
}

func holdsAny(dir string, paths []string) bool {
	for _, p := range paths {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// tmpMount is the job's private /tmp: a tmpfs, so what the job writes
// there is memory charged to its own memory cgroup (tmpfs pages count
// against the cgroup of the process that writes them), bounded by its
// memory limit and never on the node's disk; it vanishes with the job's
// mount namespace. Mode 1777 as on any host. memBytes 0 (no limit)
// leaves tmpfs's default, half the node's memory.
func tmpMount(memBytes int64) *configs.Mount {
	data := tmpfsData("mode=1777", memBytes)
	return &configs.Mount{Source: "tmpfs", Destination: "/tmp", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NODEV, Data: data}
}

// tmpfsData is a job tmpfs's mount data: opts, and a size of memBytes
// rounded up to a KiB when there is a limit.
func tmpfsData(opts string, memBytes int64) string {
	if memBytes > 0 {
		opts += ",size=" + sizeK(memBytes)
	}
	return opts
}

// sizeK is a tmpfs size of n bytes, rounded up to a KiB.
func sizeK(n int64) string { return fmt.Sprintf("%dk", (n+1023)/1024) }

// shmSize is /dev/shm's size in bytes for a job that asked for shmBytes
// (<= 0: DefaultShmBytes) with a memory limit of memBytes (0: none): never
// more than the limit, since its pages count against it.
func shmSize(shmBytes, memBytes int64) int64 {
	if shmBytes <= 0 {
		shmBytes = DefaultShmBytes
	}
	if memBytes > 0 && shmBytes > memBytes {
		shmBytes = memBytes
	}
	return shmBytes
}

// systemMounts are the container's own file systems.
func systemMounts(shmBytes, memBytes int64) []*configs.Mount {
	ms := []*configs.Mount{
		tmpMount(memBytes),
		{Source: "proc", Destination: "/proc", Device: "proc", Flags: defaultMountFlags},
		{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
		{Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC,
			Data: "newinstance,ptmxmode=0666,mode=0620,gid=5"},
		{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: defaultMountFlags,
			Data: "mode=1777,size=" + sizeK(shmBytes)},
		{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: defaultMountFlags},
		{Source: "/sys", Destination: "/sys", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC,
			RecAttr: &unix.MountAttr{Attr_set: hostViewAttrs | unix.MOUNT_ATTR_NOEXEC}},
	}
	// With a cgroup namespace the cgroup mount's root is the job's cgroup;
	// without one runc binds the job's cgroup directories there instead.
	// Either way the job reads its own limits under /sys/fs/cgroup.
	ms = append(ms, &configs.Mount{Source: "cgroup", Destination: "/sys/fs/cgroup", Device: "cgroup",
		Flags: defaultMountFlags | unix.MS_RDONLY})
	return ms
}

// bindMounts orders the caller's binds shallowest first, so that a bind
// at /tmp (one replacing the job's tmpfs) is mounted before a work
// directory under it.
func bindMounts(binds []Bind) []*configs.Mount {
	var ms []*configs.Mount
	for _, b := range shallowestFirst(binds) {
		m := &configs.Mount{Source: b.Source, Destination: b.Dest, Device: "bind", Flags: unix.MS_BIND | unix.MS_REC}
		if b.Writable {
			m.Flags |= unix.MS_NOSUID | unix.MS_NODEV
		} else {
			m.RecAttr = &unix.MountAttr{Attr_set: hostViewAttrs}
		}
		ms = append(ms, m)
	}
	return ms
}

// shallowestFirst is binds sorted by the depth of their destination,
// keeping the caller's order among equals (a later bind at the same place
// hides an earlier one).
func shallowestFirst(binds []Bind) []Bind {
	sorted := append([]Bind(nil), binds...)
	sort.SliceStable(sorted, func(i, j int) bool { return depth(sorted[i].Dest) < depth(sorted[j].Dest) })
	return sorted
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// hasCgroupNS reports whether the kernel offers cgroup namespaces.
func hasCgroupNS() bool {
	_, err := os.Stat("/proc/self/ns/cgroup")
	return err == nil
}

// rootCaps is the capability set of jobs that run as root: Docker's
// default set, without anything that administers the host.
var rootCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// jobCapabilities are a job's capability sets. A non-root job gets none
// in all five sets (bounding, effective, permitted, inheritable,
// ambient), so not even a setuid or file-capability binary can raise
// them; root gets rootCaps, never inheritable or ambient.
func jobCapabilities(uid int) *configs.Capabilities {
	if uid != 0 {
		return &configs.Capabilities{}
	}
	return &configs.Capabilities{
		Bounding: append([]string(nil), rootCaps...), Effective: append([]string(nil), rootCaps...),
		Permitted: append([]string(nil), rootCaps...),
	}
}

// Config builds the libcontainer configuration for s, the host view's
// binds first (Start makes those itself, before runc: mountView). It
// writes nothing.
func Config(s *Spec) (*configs.Config, error) {
	cfg, view, err := config(s)
	if err != nil {
		return nil, err
	}
	cfg.Mounts = append(view.mounts(), cfg.Mounts...)
	return cfg, nil
}

// config is the libcontainer configuration of s without the host view,
// and the plan of the view (nil for an image job).
func config(s *Spec) (*configs.Config, *viewPlan, error) {
	if s.Rootfs == "" || s.Resources == nil || s.CgroupPath == "" {
		return nil, nil, errors.New("container spec needs a rootfs, a cgroup path and resources")
	}
	hostRoot := "/"
	if s.hostRootOverride != "" {
		hostRoot = s.hostRootOverride
	}
	view := &viewPlan{}
	if s.Image == nil {
		var err error
		if view, err = hostView(hostRoot, s.Rootfs, s.Hide); err != nil {
			return nil, nil, err
		}
	}
	cgroupNS := hasCgroupNS()
	mounts := append(systemMounts(shmSize(s.ShmBytes, s.Resources.Memory), s.Resources.Memory), bindMounts(s.Binds)...)

	if err := checkDevices(s.Devices); err != nil {
		return nil, nil, err
	}
	devices := append([]*devcfg.Device(nil), specconv.AllowedDevices...)
	for _, d := range s.Devices {
		devices = append(devices, d.config())
	}
	res := *s.Resources
	res.Devices = nil
	for _, d := range devices {
		res.Devices = append(res.Devices, &devcfg.Rule{
			Type: d.Rule.Type, Major: d.Rule.Major, Minor: d.Rule.Minor,
			Permissions: d.Rule.Permissions, Allow: d.Rule.Allow,
		})
	}
	ns := configs.Namespaces{{Type: configs.NEWNS}, {Type: configs.NEWUTS}, {Type: configs.NEWIPC}, {Type: configs.NEWPID}}
	if cgroupNS {
		ns = append(ns, configs.Namespace{Type: configs.NEWCGROUP})
	}
	caps := jobCapabilities(s.UID)
	var filter *configs.Seccomp
	if SeccompEnabled {
		filter = DefaultSeccomp()
	}
	return &configs.Config{
		Rootfs:          s.Rootfs,
		Readonlyfs:      s.Image == nil, // an image's overlay is the job's own
		Mounts:          mounts,
		Devices:         devices,
		Namespaces:      ns,
		Cgroups:         &cgroups.Cgroup{Path: s.CgroupPath, Resources: &res},
		Capabilities:    caps,
		NoNewPrivileges: true,
		Seccomp:         filter,
		Umask:           s.Umask, // runc's init sets it just before exec, 0022 when nil
		MaskPaths: append([]string{
			"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
			"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
		}, s.Hide...),
		ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
	}, view, nil
}
