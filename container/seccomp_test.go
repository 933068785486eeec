package container

import (
	"slices"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// verdict applies a profile to one system call the way libseccomp does
// for this profile's shapes: rules for a name are OR-ed, the conditions of
// one rule AND-ed. It returns the errno of a matching rule, or 0 (allow).
func verdict(t *testing.T, p *configs.Seccomp, name string, arg0 uint64) uint {
	t.Helper()
	if p.DefaultAction != configs.Allow {
		t.Fatalf("default action %v, the evaluator handles Allow only", p.DefaultAction)
	}
	for _, c := range p.Syscalls {
		if c.Name != name {
			continue
		}
		match := true
		for _, a := range c.Args {
			if a.Index != 0 || a.Op != configs.MaskEqualTo {
				t.Fatalf("%s: condition %+v the evaluator does not know", name, a)
			}
			match = match && arg0&a.Value == a.ValueTwo
		}
		if !match {
			continue
		}
		if c.Action != configs.Errno || c.ErrnoRet == nil {
			t.Fatalf("%s: action %v errno %v, want an explicit errno", name, c.Action, c.ErrnoRet)
		}
		return *c.ErrnoRet
	}
	return 0
}

func TestDefaultSeccompVerdicts(t *testing.T) {
	p := DefaultSeccomp()
	const eperm, enosys = uint(unix.EPERM), uint(unix.ENOSYS)
	tests := []struct {
		name string
		arg0 uint64
		want uint
	}{
		// what the brief names, and the new mount API beside the old one
		{"mount", 0, eperm}, {"umount2", 0, eperm}, {"pivot_root", 0, eperm},
		{"fsopen", 0, eperm}, {"fsmount", 0, eperm}, {"move_mount", 0, eperm}, {"open_tree", 0, eperm},
		{"mount_setattr", 0, eperm}, {"kexec_load", 0, eperm}, {"kexec_file_load", 0, eperm},
		{"init_module", 0, eperm}, {"finit_module", 0, eperm}, {"delete_module", 0, eperm},
		{"create_module", 0, eperm}, {"bpf", 0, eperm}, {"keyctl", 0, eperm}, {"add_key", 0, eperm},
		{"request_key", 0, eperm}, {"setns", 0, eperm}, {"open_by_handle_at", 0, eperm},
		{"name_to_handle_at", 0, eperm}, {"reboot", 0, eperm}, {"swapon", 0, eperm}, {"swapoff", 0, eperm},
		{"acct", 0, eperm}, {"settimeofday", 0, eperm}, {"clock_settime", 0, eperm}, {"syslog", 0, eperm},
		{"userfaultfd", 0, eperm}, {"lookup_dcookie", 0, eperm}, {"quotactl", 0, eperm},
		{"vm86", 0, eperm}, {"iopl", 0, eperm}, {"ioperm", 0, eperm}, {"nfsservctl", 0, eperm},
		// namespaces: any flag, alone or among others, is refused
		{"unshare", unix.CLONE_NEWUSER, eperm},
		{"unshare", unix.CLONE_NEWNS | unix.CLONE_FS, eperm},
		{"unshare", unix.CLONE_NEWNET, eperm},
		{"unshare", unix.CLONE_NEWTIME, eperm},
		{"clone", unix.CLONE_NEWPID | uint64(unix.SIGCHLD), eperm},
		{"clone", unix.CLONE_NEWCGROUP | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS, eperm},
		{"clone3", 0, enosys}, {"io_uring_setup", 0, enosys}, {"io_uring_enter", 0, enosys},
		// what ordinary programs do stays allowed
		{"clone", uint64(unix.SIGCHLD), 0}, // fork
		{"clone", unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD |
			unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID, 0}, // a thread
		{"unshare", unix.CLONE_FILES | unix.CLONE_FS, 0},
		{"ptrace", 0, 0}, {"perf_event_open", 0, 0}, {"execve", 0, 0}, {"openat", 0, 0},
		{"kill", 0, 0}, {"chroot", 0, 0}, {"adjtimex", 0, 0},
	}
	for _, tt := range tests {
		if got := verdict(t, p, tt.name, tt.arg0); got != tt.want {
			t.Errorf("%s(%#x): errno %d, want %d", tt.name, tt.arg0, got, tt.want)
		}
	}
	if len(p.Flags) != 0 || p.ListenerPath != "" {
		t.Errorf("unexpected flags %v or listener %q", p.Flags, p.ListenerPath)
	}
}

// Every rule is well formed: libcontainer skips names it cannot resolve
// without a word, so a typo would silently allow a system call.
func TestDefaultSeccompRulesWellFormed(t *testing.T) {
	p := DefaultSeccomp()
	seen := map[string]bool{}
	for _, c := range p.Syscalls {
		if c.Name == "" || c.ErrnoRet == nil || c.Action != configs.Errno {
			t.Errorf("rule %+v", c)
		}
		if len(c.Args) == 0 {
			if seen[c.Name] {
				t.Errorf("%s listed twice", c.Name)
			}
			seen[c.Name] = true
		}
	}
	// Spot-check names against this architecture's system call table:
	// a name the kernel has here must be in the profile exactly as spelt.
	native := map[string]uintptr{
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"kexec_load": unix.SYS_KEXEC_LOAD, "init_module": unix.SYS_INIT_MODULE, "bpf": unix.SYS_BPF,
		"keyctl": unix.SYS_KEYCTL, "setns": unix.SYS_SETNS, "open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
		"userfaultfd": unix.SYS_USERFAULTFD, "fsopen": unix.SYS_FSOPEN, "clock_settime": unix.SYS_CLOCK_SETTIME,
	}
	for name, nr := range native {
		if nr == 0 || !seen[name] {
			t.Errorf("%s (nr %d) not denied unconditionally", name, nr)
		}
	}
	if got := nativeArchs(); len(got) > 0 && !slices.Contains(p.Architectures, got[0]) {
		t.Errorf("architectures %v, want the native ABIs %v", p.Architectures, got)
	}
}

// Capabilities: nothing at all for users; for root a fixed set with no
// capability that administers the host.
func TestJobCapabilities(t *testing.T) {
	user := jobCapabilities(1000)
	for name, set := range capSets(user) {
		if len(set) != 0 {
			t.Errorf("non-root %s set %v, want empty", name, set)
		}
	}
	root := jobCapabilities(0)
	forbidden := []string{"CAP_SYS_ADMIN", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_PTRACE", "CAP_SYS_TIME",
		"CAP_SYS_BOOT", "CAP_NET_ADMIN", "CAP_DAC_READ_SEARCH", "CAP_BPF", "CAP_PERFMON", "CAP_SYSLOG",
		"CAP_SYS_RESOURCE", "CAP_MAC_ADMIN", "CAP_MAC_OVERRIDE", "CAP_LINUX_IMMUTABLE", "CAP_IPC_LOCK",
		"CAP_SYS_NICE", "CAP_AUDIT_CONTROL", "CAP_BLOCK_SUSPEND", "CAP_WAKE_ALARM", "CAP_LEASE"}
	for name, set := range capSets(root) {
		for _, c := range forbidden {
			if slices.Contains(set, c) {
				t.Errorf("root %s set holds %s", name, c)
			}
		}
	}
	if len(root.Inheritable) != 0 || len(root.Ambient) != 0 {
		t.Errorf("root inheritable %v ambient %v, want none", root.Inheritable, root.Ambient)
	}
	if !slices.Equal(root.Bounding, rootCaps) || !slices.Equal(root.Effective, rootCaps) || !slices.Equal(root.Permitted, rootCaps) {
		t.Errorf("root sets %+v, want rootCaps in bounding, effective, permitted", root)
	}
	root.Bounding[0] = "CAP_SYS_ADMIN" // the sets are copies
	if rootCaps[0] == "CAP_SYS_ADMIN" {
		t.Fatal("jobCapabilities shares rootCaps with its caller")
	}
}

func capSets(c *configs.Capabilities) map[string][]string {
	return map[string][]string{"bounding": c.Bounding, "effective": c.Effective, "permitted": c.Permitted,
		"inheritable": c.Inheritable, "ambient": c.Ambient}
}

// Config puts the profile, no_new_privs and the capability sets into
// every job's configuration, root or not.
func TestConfigConfinement(t *testing.T) {
	for _, uid := range []int{0, 1000} {
		s := &Spec{Rootfs: t.TempDir(), hostRootOverride: t.TempDir(), CgroupPath: "corral-n-job3",
			Resources: &cgroups.Resources{}, UID: uid, GID: uid}
		cfg, err := Config(s)
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.NoNewPrivileges {
			t.Errorf("uid %d: no_new_privs not set", uid)
		}
		if (cfg.Seccomp != nil) != SeccompEnabled {
			t.Errorf("uid %d: seccomp profile present %v, support compiled in %v", uid, cfg.Seccomp != nil, SeccompEnabled)
		}
		if cfg.Seccomp != nil && verdict(t, cfg.Seccomp, "mount", 0) != uint(unix.EPERM) {
			t.Errorf("uid %d: the profile lets mount through", uid)
		}
		if got := jobCapabilities(uid); !slices.Equal(cfg.Capabilities.Bounding, got.Bounding) ||
			!slices.Equal(cfg.Capabilities.Ambient, got.Ambient) {
			t.Errorf("uid %d: capabilities %+v, want %+v", uid, cfg.Capabilities, got)
		}
	}
}
