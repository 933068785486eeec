package container

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// TestConfigFromFakeHost builds a config against a fake host root and
// checks the view it describes, without starting anything.
func TestConfigFromFakeHost(t *testing.T) {
	host := t.TempDir()
	for _, d := range []string{"etc", "usr/bin", "proc", "sys", "dev", "tmp", "var/lib/corral"} {
		if err := os.MkdirAll(filepath.Join(host, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("usr/bin", filepath.Join(host, "bin"))
	os.WriteFile(filepath.Join(host, ".dockerenv"), nil, 0o644)
	if l, err := net.Listen("unix", filepath.Join(host, "sock")); err == nil {
		defer l.Close()
	}
	rootfs := t.TempDir()
	s := &Spec{
		Rootfs: rootfs, hostRootOverride: host, CgroupPath: "corral-n-job1",
		Resources: &cgroups.Resources{Memory: 32 << 20},
		ShmBytes:  1 << 30, // more than the memory limit
		Hide:      []string{"/var/lib/corral"},
		Binds: []Bind{
			{Source: "/x/work", Dest: "/tmp/a/work", Writable: true},
			{Source: "/x/init", Dest: "/.corral/init"},
		},
		UID: 1000, GID: 1000,
	}
	cfg, err := Config(s)
	if err != nil {
		t.Fatal(err)
	}
	var dests []string
	byDest := map[string]int{}
	for i, m := range cfg.Mounts {
		dests = append(dests, m.Destination)
		byDest[m.Destination] = i
	}
	// The host view: every top-level entry but proc, sys, dev, tmp, symlinks
	// and sockets; /var first since it holds a hidden path.
	if got, want := dests[:3], []string{"/var", "/.dockerenv", "/etc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("host view starts %v, want %v", got, want)
	}
	for _, d := range []string{"/proc", "/dev", "/dev/shm", "/sys", "/sys/fs/cgroup", "/usr"} {
		if _, ok := byDest[d]; !ok {
			t.Errorf("no mount at %s", d)
		}
	}
	for _, d := range []string{"/bin", "/sock"} {
		if i, ok := byDest[d]; ok && cfg.Mounts[i].Device == "bind" && cfg.Mounts[i].Source == filepath.Join(host, d[1:]) {
			t.Errorf("%s is bound; want it recreated (symlink) or left out (socket)", d)
		}
	}
	if _, view, err := config(s); err != nil || !reflect.DeepEqual(view.links, []viewLink{{name: "bin", target: "usr/bin"}}) {
		t.Errorf("links %+v, %v; want the host's symlink bin -> usr/bin recreated", view, err)
	}
	if ents, err := os.ReadDir(rootfs); err != nil || len(ents) != 0 {
		t.Errorf("Config wrote into the rootfs: %v, %v", ents, err)
	}
	if m := cfg.Mounts[byDest["/etc"]]; m.RecAttr == nil || m.RecAttr.Attr_set&unix.MOUNT_ATTR_RDONLY == 0 || m.Flags&unix.MS_REC == 0 {
		t.Errorf("/etc is not a recursive read-only bind: %+v", m)
	}
	if byDest["/tmp"] > byDest["/tmp/a/work"] {
		t.Error("/tmp is mounted after the work directory below it")
	}
	if m := cfg.Mounts[byDest["/tmp"]]; m.Device != "tmpfs" || m.Data != "mode=1777,size=32768k" || m.Flags&unix.MS_NOSUID == 0 {
		t.Errorf("/tmp %+v, want a nosuid tmpfs capped at the memory limit (not the node's disk)", m)
	}
	if m := cfg.Mounts[byDest["/tmp/a/work"]]; m.RecAttr != nil || m.Flags&unix.MS_NOSUID == 0 {
		t.Errorf("work directory bind %+v, want writable and nosuid", m)
	}
	if m := cfg.Mounts[byDest["/.corral/init"]]; m.RecAttr == nil || m.RecAttr.Attr_set&unix.MOUNT_ATTR_RDONLY == 0 {
		t.Errorf("init bind %+v, want read-only", m)
	}
	if m := cfg.Mounts[byDest["/dev/shm"]]; m.Data != "mode=1777,size=32768k" {
		t.Errorf("/dev/shm data %q, want it capped at the memory limit", m.Data)
	}
	if !cfg.Readonlyfs || !cfg.NoNewPrivileges || len(cfg.Capabilities.Bounding) != 0 {
		t.Errorf("readonly %v, no_new_privs %v, caps %v", cfg.Readonlyfs, cfg.NoNewPrivileges, cfg.Capabilities)
	}
	if cfg.MaskPaths[len(cfg.MaskPaths)-1] != "/var/lib/corral" {
		t.Errorf("hidden path not masked: %v", cfg.MaskPaths)
	}
	if len(cfg.Cgroups.Resources.Devices) == 0 || s.Resources.Devices != nil {
		t.Error("device rules missing, or added to the caller's resources")
	}

	s.UID = 0
	s.Rootfs = t.TempDir()
	if cfg, err := Config(s); err != nil || len(cfg.Capabilities.Bounding) == 0 {
		t.Errorf("a root job gets no capabilities (%v)", err)
	}
}

// GPU device nodes join the standard devices, in the container and in the
// job's device cgroup, and nothing else of the host's /dev does.
func TestConfigDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates device nodes with mknod")
	}
	dir := t.TempDir()
	node := filepath.Join(dir, "nvidia3")
	if err := unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(195, 3))); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(node, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	dev, err := HostDevice(node, "/dev/nvidia3")
	if err != nil {
		t.Fatal(err)
	}
	if dev.Type != 'c' || dev.Major != 195 || dev.Minor != 3 || dev.FileMode != 0o666 {
		t.Fatalf("host device %+v", dev)
	}
	if _, err := HostDevice(dir, "/dev/x"); err == nil {
		t.Fatal("a directory taken for a device")
	}
	s := &Spec{Rootfs: t.TempDir(), hostRootOverride: t.TempDir(), CgroupPath: "corral-n-job2",
		Resources: &cgroups.Resources{}, Devices: []Device{dev}}
	cfg, err := Config(s)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, d := range cfg.Devices {
		if d.Major == 195 {
			found++
			if d.Path != "/dev/nvidia3" || d.Minor != 3 {
				t.Errorf("device %+v", d)
			}
		}
	}
	rules := 0
	for _, r := range cfg.Cgroups.Resources.Devices {
		if r.Major == 195 {
			rules++
			if r.Minor != 3 || !r.Allow || r.Permissions != "rwm" {
				t.Errorf("rule %+v", r)
			}
		}
	}
	if found != 1 || rules != 1 {
		t.Fatalf("%d devices and %d rules for major 195, want 1 each", found, rules)
	}
	s.Devices = []Device{{Path: "/etc/passwd", Type: 'c'}}
	s.Rootfs = t.TempDir()
	if _, err := Config(s); err == nil {
		t.Fatal("a device outside /dev accepted")
	}
}
