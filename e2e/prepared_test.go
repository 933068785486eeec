package e2e

import (
	"context"
	"fmt"
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
	"github.com/corral-hpc/corral/noded"
	"github.com/corral-hpc/corral/noded/shim"
)

// heldSrun is an `srun -n1` outside an allocation whose task has
// reported and waits for the test's word to end.
type heldSrun struct {
	cmd    *exec.Cmd
	out    *strings.Builder
	job    uint64
	launch *shim.Job // launch.json on the node, read while the job ran
	// sent is when srun was started, in clock ticks since boot, as
	// /proc/PID/stat counts a process's start.
	sent uint64
}

// srunHeld runs `srun -n1 <extra> sh -c ...` as uid in work: the task
// writes a file in its work directory, prints its memory limit and the
// size of /tmp, then waits for the file go. It returns once the task
// has reported, with the job's launch.json as noded wrote it.
func srunHeld(t *testing.T, c *Cluster, work string, uid uint32, extra ...string) *heldSrun {
	t.Helper()
	for _, f := range []string{"ready", "go", "from-task"} {
		os.Remove(filepath.Join(work, f))
	}
	script := `echo written > "$PWD/from-task"
if [ -f /sys/fs/cgroup/memory.max ]; then cat /sys/fs/cgroup/memory.max; else cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi
df -k /tmp | awk 'NR==2 {print $2}'
awk '{print $22}' /proc/1/stat
touch "$PWD/ready"
while [ ! -e "$PWD/go" ]; do sleep 0.05; done`
	args := append(append([]string{"srun", "-n1"}, extra...), "sh", "-c", script)
	cmd := exec.Command(anyoneCorral(t, c), args...)
	cmd.Env, cmd.Dir = c.interactiveEnv(t), work
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	h := &heldSrun{cmd: cmd, out: &strings.Builder{}, sent: uptimeTicks(t)}
	cmd.Stdout, cmd.Stderr = h.out, h.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(work, "go"), nil, 0o644)
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(work, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("srun %v: the task never reported; output so far: %s", extra, h.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{States: []api.JobState{api.StateRunning}})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("running jobs: %+v, %v; want srun's allocation alone", jobs, err)
	}
	h.job = jobs[0].ID
	if h.launch, err = shim.ReadJob(filepath.Join(c.Dir, "node-n1", "jobs", strconv.FormatUint(h.job, 10))); err != nil {
		t.Fatal(err)
	}
	return h
}

// finish lets the task end and checks srun's exit, the task's output and
// the job's accounting.
func (h *heldSrun) finish(t *testing.T, c *Cluster, work string, memBytes int64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Errorf("srun of job %d: %v; output %q", h.job, err, h.out)
	}
	lines := strings.Split(h.out.String(), "\n")
	if want := fmt.Sprintf("%d\n%d\n", memBytes, memBytes>>10); len(lines) != 4 || lines[0]+"\n"+lines[1]+"\n" != want {
		t.Errorf("job %d's task printed %q, want its memory limit and a /tmp of that size: %q and corral-init's start", h.job, h.out, want)
	}
	if b, err := os.ReadFile(filepath.Join(work, "from-task")); err != nil || string(b) != "written\n" {
		t.Errorf("job %d's task's file in the work directory: %q, %v", h.job, b, err)
	}
	j := c.WaitEnded(h.job, 30*time.Second)
	if j.State != api.StateCompleted || j.ExitCode == nil || *j.ExitCode != 0 || j.CPUTimeUsec < 0 {
		t.Errorf("job %d ended %s, exit %v, CPU time %d µs; want COMPLETED, 0 and a CPU time that is not negative", h.job, j.State, derefExit(j.ExitCode), j.CPUTimeUsec)
	}
}

// TestSrunAdoptsAPreparedContainer: after an srun outside an allocation,
// noded's next spare prepares a container for that user, and the same
// user's next srun adopts it (launch.json names the spare's token and
// its cgroup): its task writes in the work directory and sees its own
// memory limit and a /tmp of that size, srun exits 0 and the job is
// COMPLETED. Another user's srun does not fit (its own cgroup); that
// user's next one, with another --mem, adopts the container prepared for
// it. Once the cluster stops, no spare directory, container state or
// cgroup is left.
func TestSrunAdoptsAPreparedContainer(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	work := sharedDir(t)
	const nobody = 65534
	scope := noded.CgroupScope("n1", mustEval(t, filepath.Join(c.Dir, "node-n1")))
	spareOf := func(h *heldSrun) string {
		if h.launch.Prepared == "" {
			return ""
		}
		if want := cgroup.SpareName(scope, h.launch.Prepared); filepath.Base(h.launch.CgroupPath) != want {
			t.Errorf("job %d was handed prepared spare %s but its cgroup is %s, not %s", h.job, h.launch.Prepared, h.launch.CgroupPath, want)
		}
		return h.launch.Prepared
	}

	first := srunHeld(t, c, work, nobody, "--mem=200M")
	if tok := spareOf(first); tok != "" {
		t.Errorf("the first srun adopted spare %s; noded knew no user to prepare for", tok)
	}
	first.finish(t, c, work, 200<<20)
	if first.initBefore(t) {
		t.Error("the first srun's container started before srun did")
	}

	// The spare prepares its container on its own time: an srun that
	// comes first still adopts it, but waits for it, and its start then
	// says nothing of which container ran. So the test waits for it.
	waitPreparedSpare(t, c, nil)
	second := srunHeld(t, c, work, nobody, "--mem=300M")
	if spareOf(second) == "" {
		t.Errorf("the same user's second srun was not handed a prepared container: cgroup %s", second.launch.CgroupPath)
	}
	second.finish(t, c, work, 300<<20)
	if !second.initBefore(t) {
		t.Error("the second srun's container started after srun did: it was not the prepared one")
	}

	forNobody := preparedSpares(t, c)
	other := srunHeld(t, c, work, 0, "--mem=200M")
	if tok := spareOf(other); tok != "" || filepath.Base(other.launch.CgroupPath) != cgroup.JobName(scope, other.job) {
		t.Errorf("another user's srun: prepared %q, cgroup %s; want its own cgroup", tok, other.launch.CgroupPath)
	}
	other.finish(t, c, work, 200<<20)

	waitPreparedSpare(t, c, forNobody)
	again := srunHeld(t, c, work, 0, "--mem=100M")
	if spareOf(again) == "" {
		t.Errorf("that user's next srun (another --mem) was not handed the container prepared for it: cgroup %s", again.launch.CgroupPath)
	}
	again.finish(t, c, work, 100<<20)
	if !again.initBefore(t) {
		t.Error("that user's next srun's container started after srun did: it was not the prepared one")
	}

	c.Stop()
	state := filepath.Join(c.Dir, "node-n1")
	for _, d := range []string{filepath.Join(state, shim.SparesDir), filepath.Join(state, "runc")} {
		if ents, _ := os.ReadDir(d); len(ents) > 0 {
			t.Errorf("%s holds %v after the cluster stopped", d, ents)
		}
	}
	host, err := cgroup.Detect()
	if err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, h := range host.V1 {
		parents = append(parents, h.Own)
	}
	if host.UnifiedOwn != "" {
		parents = append(parents, host.UnifiedOwn, filepath.Dir(host.UnifiedOwn))
	}
	for _, p := range parents {
		left, _ := filepath.Glob(filepath.Join(p, "corral-"+scope+"-*"))
		if len(left) > 0 {
			t.Errorf("cgroups left after the cluster stopped: %v", left)
		}
	}
}

// initBefore says whether the job's corral-init (its container's PID 1)
// started before srun did: a container prepared ahead and adopted, not
// one started for the job.
func (h *heldSrun) initBefore(t *testing.T) bool {
	t.Helper()
	lines := strings.Split(h.out.String(), "\n")
	if len(lines) < 3 {
		t.Fatalf("job %d's task printed %q: no start of corral-init", h.job, h.out)
	}
	start, err := strconv.ParseUint(lines[2], 10, 64)
	if err != nil {
		t.Fatalf("job %d: corral-init's start %q: %v", h.job, lines[2], err)
	}
	return start <= h.sent // a fresh container starts tens of ms after srun, many ticks
}

// preparedSpares are the tokens of the spares on n1 whose container
// runc has created (its state is written once the container's first
// process is).
func preparedSpares(t *testing.T, c *Cluster) map[string]bool {
	t.Helper()
	state := filepath.Join(c.Dir, "node-n1")
	ents, err := os.ReadDir(filepath.Join(state, shim.SparesDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(state, "runc", shim.SpareContainerID(e.Name()), "state.json")); err == nil {
			out[e.Name()] = true
		}
	}
	return out
}

// waitPreparedSpare waits until n1 has a prepared container that is not
// one of old's.
func waitPreparedSpare(t *testing.T, c *Cluster, old map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for tok := range preparedSpares(t, c) {
			if !old[tok] {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no container prepared on n1 within 30 s (those before: %v)", old)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// uptimeTicks is now in clock ticks since boot (USER_HZ, 100 on Linux).
func uptimeTicks(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	up, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(up * 100)
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
