package noded

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestJobPlacement: a job's cgroup is the one its launch.json names, its
// own or (Prepared) its spare's, and nothing else: another job's, another
// node's, another spare's, an empty one or one placed elsewhere is refused.
func TestJobPlacement(t *testing.T) {
	h, err := cgroup.DetectFrom(strings.NewReader("31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"),
		strings.NewReader("2:memory:/noded\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{cg: h, cgScope: "n1-abcd"}
	job := func(path, prepared string) *shim.Job {
		return &shim.Job{Launch: api.LaunchRequest{JobID: 7}, CgroupPath: path, Prepared: prepared}
	}
	for _, tc := range []struct {
		name string
		job  *shim.Job
		want string // the memory directory; "" refused
	}{
		{"its own", job("corral-n1-abcd-job7", ""), "/sys/fs/cgroup/memory/noded/corral-n1-abcd-job7"},
		{"its spare's", job("corral-n1-abcd-spareab12", "ab12"), "/sys/fs/cgroup/memory/noded/corral-n1-abcd-spareab12"},
		{"another job's", job("corral-n1-abcd-job8", ""), ""},
		{"another node's", job("corral-n2-abcd-job7", ""), ""},
		{"a spare's, not prepared", job("corral-n1-abcd-spareab12", ""), ""},
		{"another spare's", job("corral-n1-abcd-spareff", "ab12"), ""},
		{"its own, though prepared", job("corral-n1-abcd-job7", "ab12"), ""},
		{"empty", job("", ""), ""},
		{"its name placed elsewhere", job("/elsewhere/corral-n1-abcd-job7", ""), ""},
		{"a token with a slash", job("x", "../x"), ""},
	} {
		p, err := d.jobPlacement(tc.job)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: placed at %+v; want a refusal", tc.name, p)
		case tc.want != "" && (err != nil || p.Dirs["memory"] != tc.want || p.Path != tc.job.CgroupPath):
			t.Errorf("%s: %+v, %v; want %s", tc.name, p, err, tc.want)
		}
	}
}

// TestRecoverAdoptedJob: a noded that restarts while a job that adopted a
// spare's container runs serves that job's socket for the spare's cgroup
// (from launch.json), not for the cgroup its ID would name; a job whose
// launch.json names a cgroup that is not its own gets no socket.
func TestRecoverAdoptedJob(t *testing.T) {
	containertest.MustRoot(t)
	ctld := nodedtest.NewFakeCtld(t, testKey)
	state := containertest.MustStateDir(t)
	resolved, err := filepath.EvalSymlinks(state)
	if err != nil {
		t.Fatal(err)
	}
	scope := CgroupScope("tn"+strconv.Itoa(os.Getpid()), resolved)
	host, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if host.Mode == cgroup.ModeV2 {
		if err := host.Prepare(cgroup.LeafName(scope)); err != nil {
			t.Fatal(err)
		}
	}
	adopted, foreign := jobIDs.Add(1), jobIDs.Add(1)
	var shims []*exec.Cmd
	spare, err := host.Place(cgroup.SpareName(scope, "ab12"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := host.Place(cgroup.JobName(scope, adopted))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []struct {
		id             uint64
		path, prepared string
	}{{adopted, spare.Path, "ab12"}, {foreign, other.Path, ""}} {
		dir := filepath.Join(resolved, "jobs", formatUint(j.id))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		sj := &shim.Job{Launch: api.LaunchRequest{JobID: j.id, User: "nobody", UID: containertest.Nobody, GID: containertest.Nobody,
			Role: api.RoleExtern, CPUs: 1, MemBytes: 128 << 20, WorkDir: "/", Start: time.Now()},
			Slots: []int{0}, CgroupPath: j.path, Prepared: j.prepared, CtlSocket: true}
		if err := shim.WriteJob(dir, sj); err != nil {
			t.Fatal(err)
		}
		// A live process stands in for the job's shim.
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		shims = append(shims, cmd)
		start, err := shim.ProcStart(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, shim.PidFile), []byte(strconv.Itoa(cmd.Process.Pid)+" "+strconv.FormatUint(start, 10)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n := mustNode(t, ctld, state, fakeShimConfig(t))
	// Before noded stops (cleanups run last first): it waits for the
	// jobs it reattached, whose "shims" end here.
	t.Cleanup(func() {
		for _, c := range shims {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		ctld.Ended(adopted)
		ctld.Ended(foreign)
	})
	want, err := n.d.cg.MemberOf(spare)
	if err != nil {
		t.Fatal(err)
	}
	n.d.mu.Lock()
	a, f := n.d.jobs[adopted], n.d.jobs[foreign]
	n.d.mu.Unlock()
	switch {
	case a == nil || f == nil:
		t.Fatalf("jobs not reattached: %v %v", a, f)
	case a.sock == nil:
		t.Error("the adopted job's socket was not served again")
	case a.sock.member != want:
		t.Errorf("the adopted job's socket admits %+v, want the spare's cgroup %+v", a.sock.member, want)
	}
	if f != nil && f.sock != nil {
		t.Errorf("a job whose launch.json names another job's cgroup got a socket admitting %+v", f.sock.member)
	}
}
