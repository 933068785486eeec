package container_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
)

// runningJob starts a container as nobody whose init writes a file in
// its private /tmp, then waits; stop ends and destroys it.
func runningJob(t *testing.T, id string) (state string, place cgroup.Placement, stop func()) {
	t.Helper()
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(cgroup.LeafName(id)); err != nil {
		t.Fatal(err)
	}
	place, err = h.Job(id, uint64(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	state = containertest.MustStateDir(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	rootfs := filepath.Join(state, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	c, err := container.Start(&container.Spec{
		ID: id, StateRoot: filepath.Join(state, "runc"), Rootfs: rootfs,
		Binds:      []container.Bind{{Source: work, Dest: work, Writable: true}},
		CgroupPath: place.Path,
		Resources:  h.Resources(cgroup.Limits{Cpuset: "0", CPUs: 1, MemBytes: 128 << 20, MaxPids: 64}),
		Args:       []string{"/bin/sh", "-c", `echo from-init > /tmp/x && touch "$WORK/ready" && exec sleep 1000`},
		Env:        []string{"PATH=/usr/bin:/bin", "WORK=" + work},
		Cwd:        work, UID: containertest.Nobody, GID: containertest.Nobody,
		Stdout: devnull, Stderr: devnull,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = c.Signal(os.Kill)
		_, _ = c.Wait()
		if err := c.Destroy(); err != nil {
			t.Error(err)
		}
		if leaks := containertest.Leaks(place.Dirs, []string{state, work}, cgroup.JobName(id, uint64(os.Getpid()))); len(leaks) > 0 {
			t.Errorf("left behind: %v", leaks)
		}
	}
	t.Cleanup(stop)
	if !containertest.Eventually(20*time.Second, func() bool { _, err := os.Stat(filepath.Join(work, "ready")); return err == nil }) {
		t.Fatal("the container's init never wrote its file")
	}
	return state, place, stop
}

// TestExecJoinsTheRunningContainer execs a process into a running job
// container as nobody: it sees the file init wrote in the job's private
// /tmp, is charged to the job's cgroup, runs with no_new_privs, no
// capabilities (and the job's seccomp filter when built with it), and
// its stdin and stdout are the pipes Exec returned. Once the container
// is gone, Open says so.
func TestExecJoinsTheRunningContainer(t *testing.T) {
	state, place, stop := runningJob(t, "exectest")
	r, err := container.Open(filepath.Join(state, "runc"), "exectest")
	if err != nil {
		t.Fatal(err)
	}
	script := `cat /tmp/x; id -u; id -G; grep -E '^(NoNewPrivs|CapEff|Seccomp):' /proc/self/status | tr -s '\t ' ' '; read line; echo "got $line"; echo err >&2`
	p, err := r.Exec(&container.ExecSpec{
		Args: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody, Groups: []int{100}, Stdin: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Blocked on its input: its cgroup, seen from the host, is the job's.
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(cg)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for ctrl, dir := range place.Dirs {
			if (ctrl == "" && f[1] == "") || (ctrl != "" && strings.Contains(","+f[1]+",", ","+ctrl+",")) {
				checked++
				if !strings.HasSuffix(dir, f[2]) {
					t.Errorf("exec'd process in %s cgroup %s, the job's is %s", ctrl, f[2], dir)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("none of the job's cgroups %v in the process's\n%s", place.Dirs, cg)
	}
	if _, err := io.WriteString(p.Stdin, "ping\n"); err != nil {
		t.Fatal(err)
	}
	p.Stdin.Close()
	errOut := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(p.Stderr); errOut <- b }()
	out, _ := io.ReadAll(p.Stdout)
	st, err := p.Wait()
	if err != nil || !st.Success() {
		t.Errorf("wait: %v %v", st, err)
	}
	want := []string{"from-init", "65534", "65534 100", "CapEff: 0000000000000000", "NoNewPrivs: 1"}
	if container.SeccompEnabled {
		want = append(want, "Seccomp: 2")
	} else {
		want = append(want, "Seccomp: 0")
	}
	want = append(want, "got ping")
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("exec'd process printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
	if e := <-errOut; string(e) != "err\n" {
		t.Errorf("stderr = %q", e)
	}

	// A terminal: the process's stdio is a tty of the container's devpts.
	tp, err := r.Exec(&container.ExecSpec{
		Args: []string{"/bin/sh", "-c", `tty; test -t 0 && test -t 1 && echo isatty`}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
		UID: containertest.Nobody, GID: containertest.Nobody, Terminal: true, Rows: 24, Cols: 80,
	})
	if err != nil {
		t.Fatal(err)
	}
	tout, _ := io.ReadAll(tp.Console) // EIO once the process is gone
	tp.Console.Close()
	if st, err := tp.Wait(); err != nil || !st.Success() {
		t.Errorf("terminal process: %v %v", st, err)
	}
	if s := strings.ReplaceAll(string(tout), "\r", ""); !strings.HasPrefix(s, "/dev/pts/") || !strings.Contains(s, "isatty") {
		t.Errorf("terminal output %q, want a /dev/pts name and isatty", tout)
	}

	stop()
	if _, err := container.Open(filepath.Join(state, "runc"), "exectest"); !errors.Is(err, container.ErrNotRunning) {
		t.Errorf("Open of a destroyed container = %v, want ErrNotRunning", err)
	}
}
