package container_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/container/initproto"
	"github.com/corral-hpc/corral/images/imagetest"
)

// adoptHost is the cgroup host of the adoption tests, prepared once.
func adoptHost(t testing.TB) *cgroup.Host {
	t.Helper()
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName("adopt")); err != nil {
		t.Fatal(err)
	}
	return h
}

// adoptPlace is the placement of the n-th container of an adoption test.
func adoptPlace(t testing.TB, h *cgroup.Host, n uint64) cgroup.Placement {
	t.Helper()
	p, err := h.Job("adopt", uint64(os.Getpid())*1000+n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// jobLimits are the limits the adoption tests give a job.
var jobLimits = cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 128 << 20, MaxPids: 64}

const jobShm = 32 << 20

// startHeld starts a container as nobody whose init only waits, as an
// extern job's corral-init does: with binds and res, or, for a prepared
// one, only its init's bind (/bin/sh standing in for corral-init) and no
// limit but the number of processes.
func startHeld(t testing.TB, stateRoot, id string, p cgroup.Placement, res *cgroups.Resources, binds []container.Bind, shm int64) *container.Container {
	t.Helper()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		pids := jobLimits.MaxPids
		res = &cgroups.Resources{PidsLimit: &pids}
	}
	rootfs := filepath.Join(filepath.Dir(stateRoot), "rootfs-"+id)
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	c, err := container.Start(&container.Spec{
		ID: id, StateRoot: stateRoot, Rootfs: rootfs,
		Binds:      append([]container.Bind{{Source: sh, Dest: initproto.InitPath}}, binds...),
		CgroupPath: p.Path, Resources: res, ShmBytes: shm,
		Args: []string{initproto.InitPath, "-c", "exec sleep 100000"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody, Stdout: devnull, Stderr: devnull,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A test that fails half-way still ends it (endHeld did already when
	// it got there: then these find nothing).
	t.Cleanup(func() {
		_ = c.Signal(unix.SIGKILL)
		_, _ = c.Wait()
		_ = c.Destroy()
	})
	return c
}

// endHeld kills and destroys c and says what it left behind.
func endHeld(t testing.TB, c *container.Container, p cgroup.Placement, paths []string) {
	t.Helper()
	_ = c.Signal(unix.SIGKILL)
	_, _ = c.Wait()
	if err := c.Destroy(); err != nil {
		t.Error(err)
	}
	if leaks := containertest.Leaks(p.Dirs, paths, filepath.Base(p.Path)); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}

// execIn runs script with sh as nobody in the running container id, as a
// job step's task, and returns what it printed.
func execIn(t testing.TB, stateRoot, id, script string, env ...string) string {
	t.Helper()
	r, err := container.Open(stateRoot, id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Exec(&container.ExecSpec{
		Args: []string{"/bin/sh", "-c", script}, Env: append([]string{"PATH=/usr/bin:/bin"}, env...), Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go io.Copy(io.Discard, p.Stderr)
	out, _ := io.ReadAll(p.Stdout)
	if st, err := p.Wait(); err != nil || !st.Success() {
		t.Errorf("%q in %s: %v %v\n%s", script, id, st, err, out)
	}
	return string(out)
}

// varTmpDir is a new directory under /var/tmp, which containers see
// through the host view (a path under /tmp is the job's own tmpfs).
func varTmpDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "corral-adopt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func fileID(t testing.TB, path string) *container.FileID {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return container.IDOf(&st)
}

// openFDs are this process's open file descriptors and what each names.
func openFDs(t testing.TB) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	fds := map[string]string{}
	for _, e := range ents {
		fds[e.Name()], _ = os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
	}
	return fds
}

// newFDs are the descriptors open in after and not in before. Only new
// ones count: one closed meanwhile is another goroutine's (os/exec
// closes a finished child's pidfd when its Wait returns).
func newFDs(before, after map[string]string) []string {
	var out []string
	for fd, what := range after {
		if before[fd] != what {
			out = append(out, fd+" -> "+what)
		}
	}
	return out
}

// viewScript prints what a job sees of its mounts and limits: the mount
// points and options of /tmp, /dev/shm and the binds ($W, $W/ro), its
// memory limit, and whether the binds are writable.
const viewScript = `awk -v w="$W" '$5=="/tmp"||$5=="/dev/shm"||$5==w||$5==w"/ro" {print $5, $6, $NF}' /proc/self/mountinfo | sort
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
touch "$W/f" && echo w-writable
touch "$W/ro/f" 2>/dev/null || echo ro-readonly
cat "$W/ro/marker" /tmp/job/ro/marker`

// TestAdopt adopts a prepared container (no binds but its init's, no
// memory limit) for a job with a writable bind, a read-only one nested
// in it, a memory limit, a cpuset and a CPU quota, and compares what a
// process exec'd into it sees with what it sees in a container Start made
// for the same job: the binds' and tmpfs's mounts, options and sizes,
// the memory limit, the cgroup's limits, a bind at a mount point made in
// the job's /tmp. The adopted container answers
// to the job's name only, its nested bind never reaches the host (the
// writable bind's source is a shared mount), Adopt leaves no descriptor
// open, and Destroy leaves nothing.
func TestAdopt(t *testing.T) {
	h := adoptHost(t)
	base := varTmpDir(t)
	w, ro := filepath.Join(base, "w"), filepath.Join(base, "ro")
	for _, d := range []string{w, ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A shared mount: a bind whose clone stayed its peer would carry the
	// nested bind back to the host.
	if err := unix.Mount("tmpfs", w, "tmpfs", 0, "size=1m,mode=755"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(w, unix.MNT_DETACH)
	if err := unix.Mount("", w, "", unix.MS_SHARED, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w, "ro"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(w, containertest.Nobody, containertest.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "marker"), []byte("ro-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The deeper bind first: Adopt must sort them.
	binds := []container.Bind{
		{Source: ro, Dest: filepath.Join(w, "ro"), Checked: fileID(t, ro)},
		{Source: w, Dest: w, Writable: true, Checked: fileID(t, w)},
		{Source: ro, Dest: "/tmp/job/ro"}, // a mount point made in the job's /tmp
	}
	state := containertest.MustStateDir(t)
	stateRoot := filepath.Join(state, "runc")

	refPlace := adoptPlace(t, h, 1)
	ref := startHeld(t, stateRoot, "reference", refPlace, h.Resources(jobLimits), binds, jobShm)
	want := execIn(t, stateRoot, "reference", viewScript, "W="+w)
	refApplied, err := cgroup.ReadApplied(h.Mode, ref.CgroupPaths())
	if err != nil {
		t.Fatal(err)
	}
	endHeld(t, ref, refPlace, []string{filepath.Join(state, "rootfs-reference")})
	os.Remove(filepath.Join(w, "f"))

	place := adoptPlace(t, h, 2)
	c := startHeld(t, stateRoot, "spare1", place, nil, nil, 0)
	pid := c.Pid()
	fds := openFDs(t)
	if err := c.Adopt(&container.Adoption{ID: "job1", Resources: h.Resources(jobLimits), Binds: binds, ShmBytes: jobShm}); err != nil {
		t.Fatal(err)
	}
	if leaked := newFDs(fds, openFDs(t)); len(leaked) > 0 {
		t.Errorf("descriptors Adopt left open: %v", leaked)
	}
	got := execIn(t, stateRoot, "job1", viewScript, "W="+w)
	for _, s := range []string{"/tmp rw,nosuid,nodev", "size=131072k", "/dev/shm rw,nosuid,nodev,noexec", "size=32768k",
		w + "/ro ro,nosuid,nodev", "w-writable", "ro-readonly", "ro-marker\nro-marker"} {
		if !strings.Contains(got, s) {
			t.Errorf("the adopted container shows no %q:\n%s", s, got)
		}
	}
	if got != want {
		t.Errorf("the adopted container shows\n%s\na container Start made for the same job shows\n%s", got, want)
	}
	if applied, err := cgroup.ReadApplied(h.Mode, c.CgroupPaths()); err != nil || applied != refApplied {
		t.Errorf("the adopted container's limits %+v (%v), Start's %+v", applied, err, refApplied)
	}
	if leaks := containertest.Leaks(nil, []string{filepath.Join(w, "ro")}, ""); len(leaks) > 0 {
		t.Errorf("the job's nested bind reached the host: %v", leaks)
	}
	if c.Pid() != pid {
		t.Errorf("Pid %d after adoption, %d before", c.Pid(), pid)
	}
	if _, err := container.Open(stateRoot, "spare1"); !errors.Is(err, container.ErrNotRunning) {
		t.Errorf("Open under the prepared name = %v, want ErrNotRunning", err)
	}
	if dirs, err := container.CgroupDirs(stateRoot, "job1"); err != nil || dirs[""] != c.CgroupPaths()[""] || dirs["memory"] != c.CgroupPaths()["memory"] {
		t.Errorf("CgroupDirs under the job's name = %v (%v), want %v", dirs, err, c.CgroupPaths())
	}
	endHeld(t, c, place, []string{filepath.Join(state, "rootfs-spare1"), filepath.Join(w, "ro")})
	for _, d := range []string{filepath.Join(stateRoot, "job1"), filepath.Join(stateRoot, "spare1"), filepath.Join(state, "rootfs-spare1")} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Destroy (%v)", d, err)
		}
	}
}

// TestAdoptRefusesAChangedSource: a bind whose source is not the file the
// caller checked (swapped after the check) is refused before anything is
// mounted, even a good bind listed with it, and the job's name stays free;
// the container is still destroyed under its own.
func TestAdoptRefusesAChangedSource(t *testing.T) {
	h := adoptHost(t)
	base := varTmpDir(t)
	good, swapped, dest := filepath.Join(base, "good"), filepath.Join(base, "swapped"), filepath.Join(base, "dest")
	for _, d := range []string{good, swapped, dest, filepath.Join(dest, "deeper")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(good, "marker"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := containertest.MustStateDir(t)
	stateRoot := filepath.Join(state, "runc")
	place := adoptPlace(t, h, 3)
	c := startHeld(t, stateRoot, "spare2", place, nil, nil, 0)
	err := c.Adopt(&container.Adoption{ID: "job2", Resources: h.Resources(jobLimits), ShmBytes: jobShm, Binds: []container.Bind{
		{Source: good, Dest: dest, Writable: true, Checked: fileID(t, good)},
		{Source: swapped, Dest: filepath.Join(dest, "deeper"), Checked: fileID(t, good)},
	}})
	if err == nil || !strings.Contains(err.Error(), swapped+" changed between its check and its mount") {
		t.Errorf("Adopt with a swapped source = %v, want a refusal naming %s", err, swapped)
	}
	out := execIn(t, stateRoot, "spare2", `ls "$D"; awk '$5=="/tmp" {print $NF}' /proc/self/mountinfo`, "D="+dest)
	if strings.Contains(out, "marker") || strings.Contains(out, "size=131072k") {
		t.Errorf("the refused adoption changed the container:\n%s", out)
	}
	if _, err := container.Open(stateRoot, "job2"); !errors.Is(err, container.ErrNotRunning) {
		t.Errorf("Open under the job's name after a refusal = %v, want ErrNotRunning", err)
	}
	endHeld(t, c, place, []string{filepath.Join(state, "rootfs-spare2"), dest})
	if _, err := os.Lstat(filepath.Join(stateRoot, "spare2")); !os.IsNotExist(err) {
		t.Errorf("the prepared container's state is still there after Destroy (%v)", err)
	}
}

// TestAdoptRefusesATakenName: a name another container has is refused
// (a rename would have replaced its state), as is one libcontainer would
// not load.
func TestAdoptRefusesATakenName(t *testing.T) {
	h := adoptHost(t)
	state := containertest.MustStateDir(t)
	stateRoot := filepath.Join(state, "runc")
	p1, p2 := adoptPlace(t, h, 4), adoptPlace(t, h, 5)
	c1 := startHeld(t, stateRoot, "spare3", p1, nil, nil, 0)
	defer endHeld(t, c1, p1, nil)
	c2 := startHeld(t, stateRoot, "spare4", p2, nil, nil, 0)
	defer endHeld(t, c2, p2, nil)
	for _, id := range []string{"spare3", "..", "a/b", ""} {
		if err := c2.Adopt(&container.Adoption{ID: id, Resources: h.Resources(jobLimits)}); err == nil {
			t.Errorf("Adopt as %q succeeded", id)
		}
	}
	for _, id := range []string{"spare3", "spare4"} {
		if _, err := container.Open(stateRoot, id); err != nil {
			t.Errorf("Open(%s) after the refusals: %v", id, err)
		}
	}
}

// hangingMount mounts a FUSE file system at dir that never answers: the
// kernel queues its first request and no one reads /dev/fuse, so every
// lookup below dir waits. release aborts the connection (the waits end
// with ENOTCONN) and unmounts it.
func hangingMount(t testing.TB, dir string) (release func()) {
	t.Helper()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("a file system that does not answer needs FUSE: %v", err)
	}
	opts := "fd=" + strconv.Itoa(int(dev.Fd())) + ",rootmode=40000,user_id=0,group_id=0"
	if err := unix.Mount("corral-hang", dir, "fuse", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		dev.Close()
		t.Fatalf("mounting a FUSE file system that does not answer: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			dev.Close()
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				t.Errorf("unmounting %s: %v", dir, err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// TestAdoptStops: a bind whose source is on a file system that does not
// answer holds Adopt until Stop closes; then Adopt returns ErrStopped,
// and the container, never given the bind, is destroyed without leaks.
func TestAdoptStops(t *testing.T) {
	h := adoptHost(t)
	state := containertest.MustStateDir(t)
	stateRoot := filepath.Join(state, "runc")
	place := adoptPlace(t, h, 6)
	c := startHeld(t, stateRoot, "spare5", place, nil, nil, 0)
	hang := filepath.Join(state, "hang")
	if err := os.Mkdir(hang, 0o755); err != nil {
		t.Fatal(err)
	}
	release := hangingMount(t, hang)
	dest := varTmpDir(t)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Adopt(&container.Adoption{ID: "job5", Resources: h.Resources(jobLimits), Stop: stop,
			Binds: []container.Bind{{Source: filepath.Join(hang, "sub"), Dest: dest, Writable: true}}})
	}()
	select {
	case err := <-done:
		release()
		endHeld(t, c, place, nil)
		t.Fatalf("Adopt with a source that does not answer returned before Stop: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(stop)
	select {
	case err := <-done:
		if !errors.Is(err, container.ErrStopped) {
			t.Errorf("Adopt after Stop = %v, want ErrStopped", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("Adopt ignored Stop")
	}
	release()
	endHeld(t, c, place, []string{filepath.Join(state, "rootfs-spare5"), hang})
	if _, err := os.Lstat(filepath.Join(stateRoot, "job5")); !os.IsNotExist(err) {
		t.Errorf("the stopped adoption took the job's name (%v)", err)
	}
}

// TestAdoptRefusesAnImage: a container in an image is not adopted (its
// writable layer keeps the size it started with), and stays as it was.
func TestAdoptRefusesAnImage(t *testing.T) {
	h := adoptHost(t)
	imagetest.MustBusybox(t)
	_, _, lower := mustStoredImage(t, "7.2")
	state := containertest.MustStateDir(t)
	stateRoot := filepath.Join(state, "runc")
	p := adoptPlace(t, h, 7)
	rootfs := filepath.Join(state, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	pids := jobLimits.MaxPids
	c, err := container.Start(&container.Spec{
		ID: "spare7", StateRoot: stateRoot, Rootfs: rootfs,
		Image:      &container.Image{Lower: lower, Layer: filepath.Join(state, "layer")},
		CgroupPath: p.Path, Resources: &cgroups.Resources{PidsLimit: &pids},
		Args: []string{"/bin/sh", "-c", "exec sleep 100000"}, Env: []string{"PATH=/bin"}, Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Adopt(&container.Adoption{ID: "job7", Resources: h.Resources(jobLimits)}); err == nil || !strings.Contains(err.Error(), "image") {
		t.Errorf("Adopt of a container in an image = %v, want a refusal", err)
	}
	if _, err := container.Open(stateRoot, "spare7"); err != nil {
		t.Errorf("the refused container: %v", err)
	}
	endHeld(t, c, p, []string{rootfs})
}
