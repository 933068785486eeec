package container_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/images/imagetest"
)

// mustStoredImage puts a busybox image with /VERSION = version into a
// new store and returns the store, the image's name and its unpacked root
// file system.
func mustStoredImage(t *testing.T, version string) (*images.Store, string, string) {
	t.Helper()
	dir := imagetest.MustLayout(t, version, imagetest.MustImage(t, version, nil))
	s, err := images.Open(containertest.MustStateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	im, err := s.Import(context.Background(), "test:"+version, dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, im.Ref, s.RootfsPath(im.ID)
}

// TestRunInImage runs a shell from a busybox image as nobody: it sees the
// image's files, not the host's, under the same cgroup limits and binds;
// its writes stay in its own layer.
func TestRunInImage(t *testing.T) {
	containertest.MustRoot(t)
	imagetest.MustBusybox(t)
	_, _, lower := mustStoredImage(t, "7.1")
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("itest")); err != nil {
		t.Fatal(err)
	}
	state := containertest.MustStateDir(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	p, err := h.Job("itest", uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(state, "rootfs")
	os.Mkdir(rootfs, 0o755)
	layer := filepath.Join(state, "layer")
	outPath := filepath.Join(state, "out")
	out := containertest.MustOutputFile(t, outPath, containertest.Nobody)
	script := `cat /VERSION; id -u
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
test -e /etc/debian_version && echo host-visible || echo host-hidden
echo hi > "$WORK/f" && echo work-writable
echo x > /tmp/t && echo tmp-writable
(echo x > /VERSION) 2>/dev/null && echo image-writable || echo image-protected`
	spec := &container.Spec{
		ID: "itest", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Image:      &container.Image{Lower: lower, Layer: layer},
		Binds:      []container.Bind{{Source: work, Dest: work, Writable: true}, {Source: work, Dest: "/tmp", Writable: true}},
		CgroupPath: p.Path,
		Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 96 << 20, MaxPids: 64}),
		Args:       []string{"/bin/sh", "-c", script},
		Env:        []string{"PATH=/bin", "WORK=" + work},
		Cwd:        work, UID: containertest.Nobody, GID: containertest.Nobody,
		Stdout: out, Stderr: out,
	}
	c, err := container.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || !st.Success() {
		t.Errorf("wait: %v %v", st, err)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(outPath)
	want := []string{"7.1", "65534", "100663296", "host-hidden", "work-writable", "tmp-writable", "image-protected"}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", text)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q\nfull output:\n%s", i, lines[i], w, text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(lower, "VERSION")); string(b) != "7.1\n" {
		t.Errorf("the shared image changed: /VERSION = %q", b)
	}
	for _, d := range []string{rootfs, layer} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists (%v)", d, err)
		}
	}
	if leaks := containertest.Leaks(p.Dirs, []string{state, work}, cgroup.JobName("itest", uint64(os.Getpid()))); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}

// TestImageInUseIsKept: an image a running job has mounted cannot be
// removed; once the job is gone it can.
func TestImageInUseIsKept(t *testing.T) {
	containertest.MustRoot(t)
	imagetest.MustBusybox(t)
	store, ref, lower := mustStoredImage(t, "8.0")
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("iuse")); err != nil {
		t.Fatal(err)
	}
	p, err := h.Job("iuse", uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	state := containertest.MustStateDir(t)
	rootfs := filepath.Join(state, "rootfs")
	os.Mkdir(rootfs, 0o755)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	c, err := container.Start(&container.Spec{
		ID: "iuse", StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Image:      &container.Image{Lower: lower, Layer: filepath.Join(state, "layer")},
		CgroupPath: p.Path,
		Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 64 << 20, MaxPids: 16}),
		Args:       []string{"/bin/sleep", "60"}, Env: []string{"PATH=/bin"}, Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody, Stdout: devnull, Stderr: devnull,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, rmErr := store.Remove(ref)
	c.Signal(syscall.SIGKILL)
	c.Wait()
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	if rmErr == nil || !strings.Contains(rmErr.Error(), "in use by a running job") {
		t.Errorf("removing a mounted image: %v", rmErr)
	}
	if _, err := store.Get(ref); err != nil {
		t.Errorf("the refused removal dropped the name: %v", err)
	}
	if _, err := store.Remove(ref); err != nil {
		t.Errorf("removing it after the job: %v", err)
	}
	if _, err := os.Stat(lower); !os.IsNotExist(err) {
		t.Errorf("its files are still there (%v)", err)
	}
}

// TestUnmountRootTakesTheLayer: what a shim that died leaves of an image
// job (the overlay on its root, the tmpfs of its writable layer) goes in
// one UnmountRoot, so the job directory can be removed.
func TestUnmountRootTakesTheLayer(t *testing.T) {
	containertest.MustRoot(t)
	state := containertest.MustStateDir(t)
	rootfs, layer := filepath.Join(state, "rootfs"), filepath.Join(state, "layer")
	for _, d := range []string{rootfs, layer} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(layer, "f"), []byte("x"), 0o600)
	if err := container.UnmountRoot(rootfs, layer); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(layer); !os.IsNotExist(err) {
		t.Errorf("the layer is left: %v", err)
	}
	if err := container.RemoveTree(state); err != nil {
		t.Errorf("the job directory cannot be removed: %v", err)
	}
	// Again, after a crash in between: nothing is mounted, nothing left.
	if err := container.UnmountRoot(rootfs, layer); err != nil {
		t.Errorf("a second UnmountRoot: %v", err)
	}
}
