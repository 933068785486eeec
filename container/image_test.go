package container_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/images/imagetest"
)

// mustStoredImage puts a busybox image with /VERSION = version into a
// store and returns its unpacked root file system.
func mustStoredImage(t *testing.T, version string) string {
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
	return s.RootfsPath(im.ID)
}

// TestRunInImage runs a shell from a busybox image as nobody: it sees the
// image's files, not the host's, under the same cgroup limits and binds;
// its writes stay in its own layer.
func TestRunInImage(t *testing.T) {
	containertest.MustRoot(t)
	imagetest.MustBusybox(t)
	lower := mustStoredImage(t, "7.1")
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
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
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
