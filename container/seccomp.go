package container

import (
	"runtime"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/seccomp"
	"golang.org/x/sys/unix"
)

// SeccompEnabled reports whether this binary can load seccomp filters:
// libcontainer's seccomp support needs cgo, libseccomp and the build tag
// "seccomp" (make builds corral-noded with it). Without it jobs run with
// no filter; Config then leaves the profile out rather than failing.
const SeccompEnabled = seccomp.Enabled

// deniedSyscalls answer EPERM to every job, root or not. The list follows
// Docker's default profile, inverted: a job may do anything an ordinary
// program does, but not administer the kernel (modules, kexec, reboot,
// swap, clocks, accounting, quotas, the kernel log), mount or pivot file
// systems (the old and the new mount API), reach keyrings shared with the
// host, use eBPF or userfaultfd (large kernel attack surfaces), open files
// by handle (a way around the mount namespace), or join namespaces.
// ptrace and perf_event_open stay allowed: debuggers and profilers are
// everyday HPC tools; the PID namespace limits ptrace to the job's own
// processes and kernel.perf_event_paranoid governs perf.
var deniedSyscalls = []string{
	// file systems and the mount namespace
	"mount", "umount", "umount2", "pivot_root", "mount_setattr", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "open_by_handle_at", "name_to_handle_at",
	"quotactl", "quotactl_fd", "swapon", "swapoff", "nfsservctl", "setns",
	// the kernel itself
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"create_module", "get_kernel_syms", "query_module", "reboot", "acct", "syslog",
	"_sysctl", "uselib", "lookup_dcookie", "bpf", "userfaultfd",
	"iopl", "ioperm", "vm86", "vm86old",
	// clocks shared with the host
	"settimeofday", "stime", "clock_settime", "clock_settime64",
	// keyrings
	"keyctl", "add_key", "request_key",
}

// namespaceFlags are the clone/unshare flags that create namespaces. A
// job that could make a user namespace would hold every capability inside
// it and reach kernel code (mounts, netfilter) meant for administrators.
var namespaceFlags = []uint64{
	unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
	unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME,
}

// absentSyscalls answer ENOSYS, as on a kernel without them, so that
// programs fall back to the older call: clone3 (its flags live in memory
// the filter cannot read; C libraries then use clone, which is checked)
// and io_uring (a large source of kernel exploits, which Docker's profile
// leaves out too; I/O libraries fall back to ordinary system calls).
var absentSyscalls = []string{"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"}

// DefaultSeccomp is the system call filter of every job: allow by
// default, EPERM for deniedSyscalls and for clone and unshare with any
// namespace flag, ENOSYS for absentSyscalls.
func DefaultSeccomp() *configs.Seccomp {
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	var calls []*configs.Syscall
	for _, name := range deniedSyscalls {
		calls = append(calls, &configs.Syscall{Name: name, Action: configs.Errno, ErrnoRet: &eperm})
	}
	for _, name := range []string{"clone", "unshare"} {
		for _, flag := range namespaceFlags {
			// One rule per flag: rules for one system call are OR-ed,
			// and "arg0 & flag == flag" matches when the bit is set.
			calls = append(calls, &configs.Syscall{
				Name: name, Action: configs.Errno, ErrnoRet: &eperm,
				Args: []*configs.Arg{{Index: 0, Value: flag, ValueTwo: flag, Op: configs.MaskEqualTo}},
			})
		}
	}
	for _, name := range absentSyscalls {
		calls = append(calls, &configs.Syscall{Name: name, Action: configs.Errno, ErrnoRet: &enosys})
	}
	return &configs.Seccomp{
		DefaultAction: configs.Allow,
		Architectures: nativeArchs(),
		Syscalls:      calls,
	}
}

// nativeArchs are the ABIs the running architecture can execute, so
// that a 32-bit or x32 system call meets the same rules instead of
// slipping past them. Other architectures get their native ABI only.
func nativeArchs() []string {
	switch runtime.GOARCH {
	case "amd64":
		return []string{"amd64", "x86", "x32"}
	case "arm64":
		return []string{"arm64", "arm"}
	}
	return nil
}
