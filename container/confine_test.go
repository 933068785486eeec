package container_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
)

// mustRunShell runs script with /bin/sh in a real container as uid (gid
// the same) and returns its output lines (stdout and stderr together).
func mustRunShell(t *testing.T, name string, uid int, script string) []string {
	t.Helper()
	text, _ := mustRunShellSpec(t, name, uid, script, nil)
	return strings.Split(strings.TrimSpace(text), "\n")
}

// mustRunShellSpec is mustRunShell with edit (if set) applied to the
// container's spec first; it returns the output as it is and the job's
// work directory (a new one per call, writable, the job's cwd), and
// checks that nothing of the container is left behind.
func mustRunShellSpec(t *testing.T, name string, uid int, script string, edit func(*container.Spec)) (out, work string) {
	t.Helper()
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName(name)); err != nil {
		t.Fatal(err)
	}
	state := containertest.MustStateDir(t)
	work = containertest.MustUserDir(t, uid, uid)
	p, err := h.Job(name, uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(state, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(state, "out")
	f := containertest.MustOutputFile(t, outPath, uid)
	spec := &container.Spec{
		ID: name, StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Binds:      []container.Bind{{Source: work, Dest: work, Writable: true}},
		CgroupPath: p.Path,
		Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 128 << 20, MaxPids: 64}),
		Args:       []string{"/bin/sh", "-c", script},
		Env:        []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
		Cwd:        work, UID: uid, GID: uid,
		Stdout: f, Stderr: f,
	}
	if edit != nil {
		edit(spec)
	}
	c, err := container.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(); err != nil {
		t.Errorf("wait: %v", err)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	if leaks := containertest.Leaks(p.Dirs, []string{state, work}, cgroup.JobName(name, uint64(os.Getpid()))); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
	text, _ := os.ReadFile(outPath)
	return string(text), work
}

// statusScript prints the confinement fields of /proc/self/status, then
// tries what a job must not do; each attempt prints one verdict line.
const statusScript = `grep -E '^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status | tr -d ' \t'
unshare -U true 2>/dev/null && echo userns-made || echo userns-denied
unshare -m true 2>/dev/null && echo mountns-made || echo mountns-denied
mount -t tmpfs none /mnt 2>/dev/null && echo mounted || echo mount-denied
mount -o remount,rw /usr 2>/dev/null && echo remounted || echo remount-denied
touch /usr/corral-test 2>/dev/null && echo usr-written || echo usr-readonly
perl -e 'syscall(425, 1, 0); print "io_uring_setup errno ", $!+0, "\n"'`

// TestJobConfinement checks, inside real containers, what the kernel
// reports for a user's job and for a root job: no_new_privs, the seccomp
// filter, the capability sets, and that namespaces, mounts and writes to
// the host view are refused.
func TestJobConfinement(t *testing.T) {
	// Without these the attempts would fail for want of a program and
	// prove nothing.
	for _, tool := range []string{"perl", "unshare", "mount", "grep", "touch"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s on the host: the test's containers run it", tool)
		}
	}
	seccompMode := "0"
	if container.SeccompEnabled {
		seccompMode = "2"
	}
	const none = "0000000000000000"
	tests := []struct {
		name string
		uid  int
		want []string // exact lines, in order; "" skips a line checked below
	}{
		{"cfuser", containertest.Nobody, []string{"CapInh:" + none, "CapPrm:" + none, "CapEff:" + none,
			"CapBnd:" + none, "CapAmb:" + none, "NoNewPrivs:1", "Seccomp:" + seccompMode,
			"", "mountns-denied", "mount-denied", "remount-denied", "usr-readonly", ""}},
		{"cfroot", 0, []string{"CapInh:" + none, "", "", "", "CapAmb:" + none, "NoNewPrivs:1", "Seccomp:" + seccompMode,
			"", "mountns-denied", "mount-denied", "remount-denied", "usr-readonly", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRunShell(t, tt.name, tt.uid, statusScript)
			if len(got) != len(tt.want) {
				t.Fatalf("output %q, want %d lines", got, len(tt.want))
			}
			for i, w := range tt.want {
				if w != "" && got[i] != w {
					t.Errorf("line %d = %q, want %q (all: %q)", i, got[i], w, got)
				}
			}
			// A user namespace would hand a job every capability inside
			// it; only the filter stops an unprivileged user making one.
			if container.SeccompEnabled && got[7] != "userns-denied" {
				t.Errorf("unshare -U: %q, want userns-denied", got[7])
			}
			// io_uring_setup (425 on every architecture) with a NULL
			// argument: EFAULT from the kernel, ENOSYS from the filter.
			if container.SeccompEnabled && got[12] != "io_uring_setup errno 38" {
				t.Errorf("%q, want ENOSYS (38)", got[12])
			}
			if tt.uid != 0 {
				return
			}
			for _, line := range got[1:4] { // CapPrm, CapEff, CapBnd
				v, err := strconv.ParseUint(line[len("CapXxx:"):], 16, 64)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				const sysAdmin, sysModule, sysPtrace = 21, 16, 19
				if v == 0 || v&(1<<sysAdmin|1<<sysModule|1<<sysPtrace) != 0 {
					t.Errorf("root job %s: want some capabilities, none that administer the host", line)
				}
			}
		})
	}
}
