package shim_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// spareProc is a `corral-shim --spare` started as noded starts one, with
// noded's ends of its pipes and what it was asked to prepare.
type spareProc struct {
	cmd    *exec.Cmd
	ctl    *os.File
	job    *os.File
	status *bufio.Scanner
	prep   *shim.Preparation
	place  cgroup.Placement
	// initPid is the prepared container's corral-init, once it runs.
	initPid int
}

// startPreparedSpare starts a spare shim and hands it a Preparation for
// the identity of tj's job (in tj's state directory), as noded does.
func startPreparedSpare(t *testing.T, tj *testJob) *spareProc {
	t.Helper()
	token := fmt.Sprintf("%x", time.Now().UnixNano())
	place, err := host.Place(cgroup.SpareName(node, token))
	if err != nil {
		t.Fatal(err)
	}
	p := shim.PreparationFor(tj.job)
	p.Token, p.Dir, p.CgroupPath = token, filepath.Join(tj.state, shim.SparesDir, token), place.Path
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	jobR, jobW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], shim.SpareArg)
	cmd.Env = append(os.Environ(), asShim+"=1")
	cmd.ExtraFiles = []*os.File{ctlR, stW, jobR} // fds 3, 4, 5
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlR.Close()
	stW.Close()
	jobR.Close()
	s := &spareProc{cmd: cmd, ctl: ctlW, job: jobW, status: bufio.NewScanner(stR), prep: p, place: place}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(tj.dir, shim.LogFile))
			t.Logf("shim.log:\n%s", b)
		}
		s.job.Close()
		s.ctl.Close()
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		stR.Close()
	})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobW.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitPrepared waits until the spare's container runs.
func (s *spareProc) waitPrepared(t *testing.T) {
	t.Helper()
	if !containertest.Eventually(30*time.Second, func() bool {
		r, err := container.Open(s.prep.RuncRoot, shim.SpareContainerID(s.prep.Token))
		if err != nil {
			return false
		}
		pid, err := r.InitPid()
		if err != nil {
			return false
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		s.initPid = pid
		return strings.Contains(string(b), "--hold")
	}) {
		t.Fatal("the spare never prepared its container")
	}
	if got := shim.OwnerPid(s.prep.Dir); got != s.cmd.Process.Pid {
		t.Errorf("the preparation's owner is %d, want the spare %d", got, s.cmd.Process.Pid)
	}
}

// handJob writes tj's launch.json as it now is and hands its directory
// to the spare, as noded does, then waits for the job to start.
func (s *spareProc) handJob(t *testing.T, tj *testJob) {
	t.Helper()
	if err := shim.WriteJob(tj.dir, tj.job); err != nil {
		t.Fatal(err)
	}
	if _, err := s.job.WriteString(tj.dir + "\n"); err != nil {
		t.Fatal(err)
	}
	s.job.Close()
	for s.status.Scan() {
		if strings.HasPrefix(s.status.Text(), "started ") {
			return
		}
	}
	t.Fatal("the spare's job never started")
}

// end cancels the job, waits for the spare to exit and returns the result.
func (s *spareProc) end(t *testing.T, dir string) *shim.Result {
	t.Helper()
	if _, err := s.ctl.Write([]byte{'c'}); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("the spare shim: %v", err)
	}
	r, err := shim.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mustLeaveNothing checks that neither the prepared container nor the
// job's is left: no libcontainer state under either name, no cgroup of
// either, no preparation directory, no process.
func (s *spareProc) mustLeaveNothing(t *testing.T, tj *testJob) {
	t.Helper()
	var leaks []string
	containertest.Eventually(5*time.Second, func() bool {
		leaks = containertest.Leaks(s.place.Dirs, []string{tj.state, tj.work}, cgroup.SpareName(node, s.prep.Token))
		leaks = append(leaks, containertest.Leaks(tj.place.Dirs, nil, cgroup.JobName(node, tj.job.Launch.JobID))...)
		return len(leaks) == 0
	})
	for _, id := range []string{shim.SpareContainerID(s.prep.Token), shim.ContainerID(tj.job.Launch.JobID)} {
		if _, err := os.Stat(filepath.Join(s.prep.RuncRoot, id)); !os.IsNotExist(err) {
			leaks = append(leaks, "libcontainer state "+id)
		}
	}
	for _, p := range []string{s.prep.Dir, filepath.Join(tj.dir, shim.RootfsDir)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			leaks = append(leaks, p)
		}
	}
	if len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}

// TestPreparedSpareAdopts: a spare that prepared a container for a user's
// extern job gives it to the next extern job of that user that noded
// hands it (Prepared): the job's step task runs in the prepared
// container's cgroup, as the user, sees its work directory writable, a
// /tmp sized by the job's memory and its own memory limit; cancelled,
// the job ends CANCELLED with a CPU time of its own, and nothing of
// either container is left.
func TestPreparedSpareAdopts(t *testing.T) {
	tj := mustJob(t, "", func(j *shim.Job) {
		j.Launch.Role, j.Launch.MemBytes, j.Launch.ShmBytes = api.RoleExtern, 96<<20, 8<<20
		j.CtlSocket = false
	})
	s := startPreparedSpare(t, tj)
	s.waitPrepared(t)
	tj.job.Prepared, tj.job.CgroupPath = s.prep.Token, s.place.Path
	s.handJob(t, tj)
	// The cgroup is the prepared one (v2 cannot rename it), as noded
	// wrote in launch.json.
	initPid, dirs := shim.ReadStarted(tj.dir)
	if initPid != s.initPid {
		t.Errorf("the job's corral-init is %d, want the prepared container's %d (adopted, not started anew)", initPid, s.initPid)
	}
	for c, d := range s.place.Dirs {
		if dirs[c] != d {
			t.Errorf("the job's cgroup (%q) is %s, want the spare's %s", c, dirs[c], d)
		}
	}

	srun := newFakeSrun(t, "tok", node)
	script := `cg=/sys/fs/cgroup
if [ -f $cg/memory.max ]; then cat $cg/memory.max; else cat $cg/memory/memory.limit_in_bytes; fi
df -k /tmp | awk 'NR==2 {print $2}'
df -k /dev/shm | awk 'NR==2 {print $2}'
echo written > "$PWD/from-task" && echo wrote
id -u`
	mustStep(t, tj, 0, []int{0}, []string{"/bin/sh", "-c", script}, srun.ln.Addr().String())
	runner, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	got := srun.collect(t, nil)
	runner.Wait()
	want := fmt.Sprintf("%d\n%d\n%d\nwrote\n%d\n", 96<<20, 96<<10, 8<<10, containertest.Nobody)
	if g := got[0]; g == nil || g.out != want || g.exit == nil || g.exit.Code != 0 {
		t.Errorf("the task in the adopted container: %+v, want output %q and exit 0", g, want)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(tj.work, "from-task"), &st); err != nil || st.Uid != containertest.Nobody {
		t.Errorf("the task's file in the work directory: uid %d, %v; want one of nobody's", st.Uid, err)
	}
	if _, err := os.Stat(filepath.Join(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID))); err != nil {
		t.Errorf("the adopted container is not named after the job: %v", err)
	}
	r := s.end(t, tj.dir)
	if r.State != api.StateCancelled || r.CPUTimeUsec < 0 || r.Start.IsZero() {
		t.Errorf("result %+v, want CANCELLED with a start and a CPU time that is not negative", r)
	}
	s.mustLeaveNothing(t, tj)
}

// TestPreparedSpareJobDoesNotFit: a job that does not fit the
// preparation (here: another umask, which corral-init could not change)
// runs the usual way, in a container of its own named and placed after
// the job, and the prepared one is gone.
func TestPreparedSpareJobDoesNotFit(t *testing.T) {
	tj := mustJob(t, "", func(j *shim.Job) { j.Launch.Role = api.RoleExtern })
	s := startPreparedSpare(t, tj)
	s.waitPrepared(t)
	tj.job.Launch.Umask = "0077"
	s.handJob(t, tj)
	if !containertest.Eventually(10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(s.prep.RuncRoot, shim.SpareContainerID(s.prep.Token)))
		return os.IsNotExist(err)
	}) {
		t.Error("the prepared container outlived the start of a job that does not fit it")
	}
	for c, d := range tj.place.Dirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the job's own cgroup (%s) %s: %v", c, d, err)
		}
	}
	if r := s.end(t, tj.dir); r.State != api.StateCancelled {
		t.Errorf("result %+v, want CANCELLED", r)
	}
	s.mustLeaveNothing(t, tj)
}

// TestPreparedSpareNotNeeded: a prepared spare whose job pipe closes
// without a job (noded stopped, or retired it) destroys its container,
// removes its directory and exits 0.
func TestPreparedSpareNotNeeded(t *testing.T) {
	tj := mustJob(t, "", func(j *shim.Job) { j.Launch.Role = api.RoleExtern })
	s := startPreparedSpare(t, tj)
	s.waitPrepared(t)
	s.job.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("the spare exited with %v, want 0", err)
	}
	s.mustLeaveNothing(t, tj)
	if _, err := os.Stat(filepath.Join(tj.dir, shim.ResultFile)); !os.IsNotExist(err) {
		t.Errorf("a spare without a job wrote a result (%v)", err)
	}
}

// TestPreparedSpareFallsBackWhenAdoptionFails: a job that fits the
// preparation but whose container the prepared one cannot become (here:
// a --mount at a top-level path the host lacks, which runc makes in a
// new container's root but which the prepared container's read-only
// root cannot take) runs in a container started the usual way, in the
// cgroup noded placed it in (the spare's), with its mount; the prepared
// container is gone.
func TestPreparedSpareFallsBackWhenAdoptionFails(t *testing.T) {
	data := mustDataRoot(t)
	target := fmt.Sprintf("/corral-test-%x", time.Now().UnixNano())
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("%s exists on this host (%v): the test needs a path that does not", target, err)
	}
	tj := mustJob(t, "", func(j *shim.Job) {
		j.Launch.Role = api.RoleExtern
		j.CtlSocket = false
		j.MountRoots = []string{data}
		j.Launch.Mounts = []api.Mount{{Source: data + "/mine", Target: target}}
	})
	s := startPreparedSpare(t, tj)
	s.waitPrepared(t)
	if !s.prep.Fits(tj.job) {
		t.Fatal("the job does not fit its preparation: the test would not reach the adoption")
	}
	tj.job.Prepared, tj.job.CgroupPath = s.prep.Token, s.place.Path
	s.handJob(t, tj)
	initPid, dirs := shim.ReadStarted(tj.dir)
	if initPid == 0 || initPid == s.initPid {
		t.Errorf("the job's corral-init is %d, the prepared one was %d: want a container started anew", initPid, s.initPid)
	}
	for c, d := range s.place.Dirs {
		if dirs[c] != d {
			t.Errorf("the job's cgroup (%q) is %s, want the one noded placed it in, the spare's %s", c, dirs[c], d)
		}
	}
	if _, err := os.Stat(filepath.Join(s.prep.RuncRoot, shim.SpareContainerID(s.prep.Token))); !os.IsNotExist(err) {
		t.Errorf("the prepared container is still there (%v)", err)
	}
	srun := newFakeSrun(t, "tok", node)
	mustStep(t, tj, 0, []int{0}, []string{"/bin/sh", "-c", "echo mounted > " + target + "/from-task && cat " + target + "/from-task"}, srun.ln.Addr().String())
	runner, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	got := srun.collect(t, nil)
	runner.Wait()
	if g := got[0]; g == nil || g.out != "mounted\n" || g.exit == nil || g.exit.Code != 0 {
		t.Errorf("the task with the mount: %+v, want output \"mounted\" and exit 0", g)
	}
	if b, err := os.ReadFile(filepath.Join(data, "mine", "from-task")); err != nil || string(b) != "mounted\n" {
		t.Errorf("the task's file in the mount's source: %q, %v", b, err)
	}
	if r := s.end(t, tj.dir); r.State != api.StateCancelled {
		t.Errorf("result %+v, want CANCELLED", r)
	}
	s.mustLeaveNothing(t, tj)
}
