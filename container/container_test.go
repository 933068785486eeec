package container_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
)

func TestMain(m *testing.M) {
	containertest.DispatchInit()
	os.Exit(m.Run())
}

// TestRunReadOnlyHost runs /bin/sh in a real container as nobody and checks
// the view it gets, then that nothing is left behind.
func TestRunReadOnlyHost(t *testing.T) {
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("ctest")); err != nil {
		t.Fatal(err)
	}
	state := containertest.MustStateDir(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	secret := filepath.Join(state, "secret")
	if err := os.WriteFile(secret, []byte("hidden"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Put the hidden directory somewhere the host view includes, so the
	// mask is what hides it (the state dir itself is under /tmp).
	hideDir, err := os.MkdirTemp("/var/tmp", "corral-hide-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hideDir)
	os.WriteFile(filepath.Join(hideDir, "secret"), []byte("x"), 0o644)
	os.Chmod(hideDir, 0o755)

	p, err := h.Job("ctest", uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(state, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(state, "out")
	out := containertest.MustOutputFile(t, outPath, containertest.Nobody)
	script := `id -u; id -G
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
touch /etc/corral-test 2>/dev/null && echo etc-writable || echo etc-readonly
echo hi > "$WORK/f" && echo work-writable
ls "$HIDE" | wc -l
head -c 10 /proc/1/cmdline | tr '\0' ' '; echo
readlink /bin`
	spec := &container.Spec{
		ID: "ctest", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Binds:      []container.Bind{{Source: work, Dest: work, Writable: true}},
		Hide:       []string{hideDir},
		CgroupPath: p.Path,
		Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 128 << 20, MaxPids: 64}),
		Args:       []string{"/bin/sh", "-c", script},
		Env:        []string{"PATH=/usr/bin:/bin", "WORK=" + work, "HIDE=" + hideDir},
		Cwd:        work, UID: containertest.Nobody, GID: containertest.Nobody, Groups: []int{100},
		Stdout: out, Stderr: out,
	}
	c, err := container.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CgroupPaths(); got["memory"] != p.Dirs["memory"] && got[""] != p.Dirs[""] {
		t.Errorf("container cgroup paths %v, placement %v", got, p.Dirs)
	}
	st, err := c.Wait()
	if err != nil || !st.Success() {
		t.Errorf("wait: %v %v", st, err)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(outPath)
	want := []string{"65534", "65534 100", "134217728", "etc-readonly", "work-writable", "0", "/bin/sh -c", "usr/bin"}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", text)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want %q\nfull output:\n%s", i, lines[i], w, text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(work, "f")); !bytes.Equal(b, []byte("hi\n")) {
		t.Errorf("work dir file = %q", b)
	}
	if leaks := containertest.Leaks(p.Dirs, []string{state, work}, cgroup.JobName("ctest", uint64(os.Getpid()))); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
	for _, d := range []string{rootfs, filepath.Join(state, "runc", "ctest")} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists", d)
		}
	}
}

func TestRemoveTreeRefusesMounts(t *testing.T) {
	if err := container.RemoveTree("/"); err == nil {
		t.Error("RemoveTree(/) succeeded")
	}
	if err := container.RemoveTree("relative"); err == nil {
		t.Error("RemoveTree of a relative path succeeded")
	}
	// /proc is a mount point: refusing it proves the check reads mountinfo.
	if err := container.RemoveTree("/proc"); err == nil || !strings.Contains(err.Error(), "mounted") {
		t.Errorf("RemoveTree(/proc) = %v, want a refusal naming the mount", err)
	}
	d := filepath.Join(t.TempDir(), "x")
	os.MkdirAll(filepath.Join(d, "a", "b"), 0o755)
	if err := container.RemoveTree(d); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Error("directory not removed")
	}
}

// TestRemoveTreeEmptyMountPoint: an empty directory or a file RemoveTree
// removes without reading the mount table is still refused when it is a
// mount point (an empty tmpfs, a file bound over), and left mounted; a
// plain file and an empty directory go.
func TestRemoveTreeEmptyMountPoint(t *testing.T) {
	containertest.MustRoot(t)
	base := t.TempDir()
	dir, file := filepath.Join(base, "empty"), filepath.Join(base, "file")
	os.Mkdir(dir, 0o755)
	os.WriteFile(file, nil, 0o644)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	if err := syscall.Mount("/etc/hostname", file, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	defer syscall.Unmount(file, syscall.MNT_DETACH)
	for _, p := range []string{dir, file} {
		if err := container.RemoveTree(p); err == nil || !strings.Contains(err.Error(), "mounted") {
			t.Errorf("RemoveTree(%s) = %v, want a refusal naming the mount", p, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	syscall.Unmount(dir, syscall.MNT_DETACH)
	syscall.Unmount(file, syscall.MNT_DETACH)
	for _, p := range []string{dir, file, filepath.Join(base, "missing")} {
		if err := container.RemoveTree(p); err != nil {
			t.Errorf("RemoveTree(%s): %v", p, err)
		}
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
}

// TestStartRefusesStdioRuncWouldChown: runc's init makes the container's
// user the owner of its stdio (unless /dev/null), so Start refuses a
// stdio file someone else owns, before anything is created, and the
// file keeps its owner and mode.
func TestStartRefusesStdioRuncWouldChown(t *testing.T) {
	containertest.MustRoot(t)
	state := containertest.MustStateDir(t)
	rootfs := filepath.Join(state, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	rootFile := filepath.Join(state, "rootfile")
	if err := os.WriteFile(rootFile, []byte("t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(rootFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = container.Start(&container.Spec{
		ID: "stdio-refused", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Args: []string{"/bin/true"}, Cwd: "/", UID: containertest.Nobody, GID: containertest.Nobody,
		Stdin: f,
	})
	if err == nil || !strings.Contains(err.Error(), "runc would make uid") {
		t.Fatalf("Start with a root-owned stdin for nobody: %v, want a refusal", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(rootFile, &st); err != nil || st.Uid != 0 || st.Mode&0o7777 != 0o644 {
		t.Errorf("root's file is now uid %d mode %o (%v), want 0 and 644", st.Uid, st.Mode&0o7777, err)
	}
	if ents, _ := os.ReadDir(rootfs); len(ents) > 0 {
		t.Errorf("rootfs not empty after the refusal: %v", ents)
	}
}

// TestStartRefusesASwappedBind: a user who owns a directory on a
// --mount's path swaps it for a symlink, between the shim's check (as the
// user) and runc's mount (as root), to a directory only root reaches (an
// open directory below a 0700 one: someone's 0755 project below their
// 0700 home). Without the check's identity the job gets that directory,
// writable; with it, Start refuses and the job never runs. A work
// directory named through the user's own symlink is no swap and runs.
func TestStartRefusesASwappedBind(t *testing.T) {
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("swap")); err != nil {
		t.Fatal(err)
	}
	secret, err := os.MkdirTemp("/var/tmp", "corral-rootonly-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(secret)
	os.Chmod(secret, 0o700)
	inner := filepath.Join(secret, "open")
	os.Mkdir(inner, 0o777)
	os.Chmod(inner, 0o777)
	for _, c := range []struct {
		name             string
		checked, swapped bool
		linked           bool // the path is a symlink to the checked directory from the start
	}{{"unchecked swap", false, true, false}, {"checked swap", true, true, false}, {"own symlink", true, false, true}} {
		state := containertest.MustStateDir(t)
		// Outside /tmp, which the job sees as its own tmpfs: the link must
		// be in the job's view for its destination to go through it.
		work, err := os.MkdirTemp("/var/tmp", "corral-work-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(work)
		os.Chmod(work, 0o755)
		dir, real := filepath.Join(work, "w"), filepath.Join(work, "real")
		os.Mkdir(real, 0o755)
		os.Chown(real, containertest.Nobody, containertest.Nobody)
		os.Symlink(real, dir) // the user's own link
		dest := "/in"
		if c.linked {
			dest = dir
		}
		var st syscall.Stat_t
		if err := syscall.Stat(dir+"/.", &st); err != nil {
			t.Fatal(err)
		}
		bind := container.Bind{Source: dir, Dest: dest, Writable: true}
		if c.checked {
			bind.Checked = &container.FileID{Dev: st.Dev, Ino: st.Ino}
		}
		if c.swapped { // after the check
			os.Remove(dir)
			os.Symlink(inner, dir)
		}
		p, err := h.Job("swap", uint64(os.Getpid()))
		if err != nil {
			t.Fatal(err)
		}
		rootfs := filepath.Join(state, "rootfs")
		os.Mkdir(rootfs, 0o755)
		devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		ctr, err := container.Start(&container.Spec{
			ID: "swap", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
			Binds:      []container.Bind{bind},
			CgroupPath: p.Path,
			Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 64 << 20, MaxPids: 16}),
			Args:       []string{"/bin/sh", "-c", "echo written > " + dest + "/marker"},
			Env:        []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
			UID: containertest.Nobody, GID: containertest.Nobody, Stdout: devnull, Stderr: devnull,
		})
		devnull.Close()
		if err == nil {
			ctr.Wait()
			ctr.Destroy()
		}
		_, inSecret := os.Stat(filepath.Join(inner, "marker"))
		_, inReal := os.Stat(filepath.Join(real, "marker"))
		switch {
		case !c.checked && inSecret != nil:
			t.Errorf("%s: the swap did not reach the root-only directory (%v): the test proves nothing", c.name, err)
		case c.checked && c.swapped && (err == nil || !strings.Contains(err.Error(), "changed between its check and its mount") || inSecret == nil):
			t.Errorf("%s: Start = %v, marker in the root-only directory %v; want a refusal", c.name, err, inSecret == nil)
		case c.linked && (err != nil || inReal != nil):
			t.Errorf("%s: Start = %v, marker %v; want the job to run in its directory", c.name, err, inReal)
		}
		os.Remove(filepath.Join(inner, "marker"))
		if leaks := containertest.Leaks(p.Dirs, []string{state}, cgroup.JobName("swap", uint64(os.Getpid()))); len(leaks) > 0 {
			t.Errorf("%s: left behind: %v", c.name, leaks)
		}
	}
}

// TestStartStops: a container whose setup hangs (runc's init frozen in
// its cgroup, standing in for a bind mount of a file system that does
// not answer) is abandoned when Stop closes: Start returns ErrStopped
// within seconds and leaves nothing behind. Before, Start waited for
// runc's init for as long as it took, deaf to cancel and the time limit.
func TestStartStops(t *testing.T) {
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("stop")); err != nil {
		t.Fatal(err)
	}
	p, err := h.Job("stop", uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	freezer, ok := p.Dirs["freezer"]
	if !ok {
		t.Skip("needs the cgroup v1 freezer to make runc's init hang")
	}
	// After runc's create, which refuses a frozen cgroup, before its init
	// joins the cgroup.
	restore := container.SetStartHook(func() {
		os.Mkdir(freezer, 0o755)
		if err := os.WriteFile(filepath.Join(freezer, "freezer.state"), []byte("FROZEN"), 0); err != nil {
			t.Error(err)
		}
	})
	defer restore()
	state := containertest.MustStateDir(t)
	rootfs := filepath.Join(state, "rootfs")
	os.Mkdir(rootfs, 0o755)
	stop := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	done := make(chan error, 1)
	go func() {
		c, err := container.Start(&container.Spec{
			ID: "stop", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
			CgroupPath: p.Path,
			Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 64 << 20, MaxPids: 16}),
			Args:       []string{"/bin/true"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
			UID: containertest.Nobody, GID: containertest.Nobody, Stdout: devnull, Stderr: devnull,
			Stop: stop,
		})
		if err == nil {
			c.Wait()
			c.Destroy()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, container.ErrStopped) || strings.Contains(err.Error(), "could not be killed") {
			t.Errorf("Start = %v, want ErrStopped with its init killed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Start ignored Stop")
	}
	if leaks := containertest.Leaks(p.Dirs, []string{state}, cgroup.JobName("stop", uint64(os.Getpid()))); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}
