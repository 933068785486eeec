package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// How a step ends when its job ends under it (issue 13; docs/steps.md, "A
// step when its job ends"): with its own state, as Slurm 22.05 records
// it, not its job's.

// twoNodesWithSlurmNames starts a cluster of two nodes whose jobs end at
// cleanup, and puts the Slurm names (srun, sacct, ...) first on PATH, for
// the jobs' scripts too; it returns the cluster, a job directory and the
// names' directory.
func twoNodesWithSlurmNames(t *testing.T) (*Cluster, string, string) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	bin := slurmBin(t, dir)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return c, dir, bin
}

// waitStepsEnded waits until every step of job id has ended and returns
// them.
func (c *Cluster) waitStepsEnded(id uint64, timeout time.Duration) []api.Step {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var steps []api.Step
		if err := c.Client.Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", id), nil, &steps); err != nil {
			c.t.Fatal(err)
		}
		if len(steps) > 0 && !slices.ContainsFunc(steps, func(s api.Step) bool { return !s.State.Terminal() }) {
			return steps
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("steps of job %d not all ended within %s: %+v", id, timeout, steps)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleepsRunning counts the processes on this host that run `sleep N`
// (exec'ed by a task: nothing else on the host runs that).
func sleepsRunning(t *testing.T, n int) int {
	t.Helper()
	want := []byte(fmt.Sprintf("sleep\x00%d\x00", n))
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	count := 0
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, want) {
			count++
		}
	}
	return count
}

// waitNoSleeps waits until no process runs `sleep N`.
func waitNoSleeps(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for sleepsRunning(t, n) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("tasks running `sleep %d` are still there %s later", n, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A batch script that exits 0 while steps it started in the background
// still run: the job ends COMPLETED, the steps' tasks on both nodes are
// killed, and sacct shows each step's own end as Slurm's does: the 2-node
// step the job's end killed CANCELLED 0:15, the one whose task 0 exited 3
// before the other task was killed FAILED 3:0; the steps that ended
// before keep theirs (COMPLETED 0:0, FAILED 3:0).
func TestStepRunningWhenItsScriptExits(t *testing.T) {
	c, dir, bin := twoNodesWithSlurmNames(t)
	const task = 3137 // the tasks run `sleep 3137` (step "killed") and `sleep 3138` (step "failfirst")
	script := fmt.Sprintf(`srun -N1 -n1 true
srun -N1 -n1 sh -c 'exit 3'
srun -J killed -N2 -n2 --overlap sh -c 'echo $SLURM_PROCID >> up; exec sleep %d' &
srun -J failfirst -N1 -n2 --overlap sh -c 'if [ $SLURM_PROCID = 0 ]; then exit 3; fi; echo x >> up; exec sleep %d' &
until [ "$(cat up 2>/dev/null | wc -l)" -ge 3 ]; do sleep 0.1; done
exit 0`, task, task+1)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=2", "-o", "out", "--wrap", script)
	if j := c.WaitEnded(id, 90*time.Second); j.State != api.StateCompleted {
		b, _ := os.ReadFile(filepath.Join(dir, "out"))
		t.Fatalf("job ended %s (%s); output %q", j.State, j.Message, b)
	}
	steps := c.waitStepsEnded(id, 30*time.Second)
	waitNoSleeps(t, task, 10*time.Second)
	waitNoSleeps(t, task+1, 10*time.Second)
	i := slices.IndexFunc(steps, func(s api.Step) bool { return s.Name == "killed" })
	if len(steps) != 4 || i < 0 || steps[i].End == nil || steps[i].State != api.StateCancelled || steps[i].ExitCode != 0 || steps[i].Signal != int(syscall.SIGTERM) {
		t.Fatalf("steps after the script's exit: %+v; want step \"killed\" CANCELLED 0:15", steps)
	}
	// The two background steps get their IDs in the order their sruns
	// reach the controller: compare sacct's lines by step name.
	r := c.slurmCmd(bin, dir, "sacct", "-j", fmt.Sprint(id), "-P", "-n", "-o", "JobName,State,ExitCode")
	got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	slices.Sort(got)
	want := []string{"batch|COMPLETED|0:0", "extern|COMPLETED|0:0", "failfirst|FAILED|3:0", "killed|CANCELLED|0:15",
		"sh|FAILED|3:0", "true|COMPLETED|0:0", "wrap|COMPLETED|0:0"}
	if r.Code != 0 || !slices.Equal(got, want) {
		t.Errorf("sacct -j %d: exit %d\n%s\nwant (sorted) %q\nstderr %q", id, r.Code, r.Stdout, want, r.Stderr)
	}
}

// A job that hits its time limit during a step ends TIMEOUT; its step,
// whose tasks its end killed, is CANCELLED 0:15: Slurm 22.05 records a
// step TIMEOUT only for the step's own time limit (srun -t).
func TestStepDuringAJobTimeout(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	const task = 3141
	id := c.Submit(dir, "-t", "0:03", "-o", "out", "--wrap", fmt.Sprintf("srun -n1 sh -c 'exec sleep %d'", task))
	if j := c.WaitEnded(id, 60*time.Second); j.State != api.StateTimeout {
		t.Fatalf("job ended %s (%s), want TIMEOUT", j.State, j.Message)
	}
	steps := c.waitStepsEnded(id, 30*time.Second)
	waitNoSleeps(t, task, 10*time.Second)
	if len(steps) != 1 || steps[0].State != api.StateCancelled || steps[0].ExitCode != 0 || steps[0].Signal != int(syscall.SIGTERM) || steps[0].End == nil {
		t.Fatalf("step of the timed-out job: %+v; want CANCELLED 0:15", steps)
	}
	r := c.Corral("acct", "-j", fmt.Sprint(id), "--json")
	var recs []api.AcctRecord
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &recs) != nil || len(recs) != 1 || recs[0].State != api.StateTimeout ||
		!slices.ContainsFunc(recs[0].Steps, func(s api.Step) bool {
			return s.StepID == 0 && s.State == api.StateCancelled && s.ExitCode == 0 && s.Signal == int(syscall.SIGTERM)
		}) {
		t.Fatalf("corral acct --json: exit %d, want the job TIMEOUT and step 0 CANCELLED 0:15\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Issue 13, acceptance 7: a node lost while a 2-node step runs (its
// noded stopped past the node timeout) ends the job and the step
// NODE_FAIL, and the step's task on the other node is killed; the lost
// node's own task goes when the node returns.
func TestStepOfALostNodeEndsNodeFailEverywhere(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	const task = 4170 // node i's task runs `sleep 4170+i`
	script := fmt.Sprintf(`srun -N2 -n2 sh -c 'echo $SLURM_NODEID >> up; exec sleep $((%d + SLURM_NODEID))'`, task)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=1", "--no-requeue", "-o", "out", "--wrap", script)
	nodes := c.WaitState(id, api.StateRunning, 60*time.Second).Nodes
	waitFile(t, filepath.Join(dir, "up"), "1", 30*time.Second)
	waitFile(t, filepath.Join(dir, "up"), "0", 30*time.Second)
	lost := c.nodes[slices.Index([]string{"n1", "n2"}, nodes[1])] // not the batch node
	if err := lost.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.endJobsAtCleanup()
	t.Cleanup(func() { _ = lost.Process.Signal(syscall.SIGCONT) })
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateNodeFail {
		t.Fatalf("job ended %s (%s), want NODE_FAIL", j.State, j.Message)
	}
	steps := c.waitStepsEnded(id, 10*time.Second)
	if len(steps) != 1 || steps[0].State != api.StateNodeFail {
		t.Fatalf("step of the lost node: %+v, want NODE_FAIL", steps)
	}
	waitNoSleeps(t, task, 20*time.Second) // the task on the node still up
	if err := lost.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitNoSleeps(t, task+1, 30*time.Second) // the lost node's, once it is back
	if st := c.waitStepsEnded(id, time.Second); st[0].State != api.StateNodeFail {
		t.Fatalf("the step's record changed to %s when its leftover ended", st[0].State)
	}
}

// Issue 13, acceptance 7 with the job ending meanwhile: noded of the
// step's second node is killed (-9) while a 2-node step runs, and the
// batch script exits. The step stays RUNNING while that node is silent
// (its task runs on under its runner) and squeue -s lists it; once noded
// is back the leftover is stopped, its end is reported, and the step
// ends CANCELLED by its signal, not NODE_FAIL: the node was never lost.
func TestStepEndsAfterANodedKill9AndItsJobsEnd(t *testing.T) {
	c, dir, bin := twoNodesWithSlurmNames(t)
	const task = 4270 // node i's task runs `sleep 4270+i`
	script := fmt.Sprintf(`srun -N2 -n2 sh -c 'echo $SLURM_NODEID >> up; exec sleep $((%d + SLURM_NODEID))' &
until [ -e go ]; do sleep 0.1; done
exit 0`, task)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=1", "-o", "out", "--wrap", script)
	nodes := c.WaitState(id, api.StateRunning, 60*time.Second).Nodes
	waitFile(t, filepath.Join(dir, "up"), "0", 30*time.Second)
	waitFile(t, filepath.Join(dir, "up"), "1", 30*time.Second)
	second := slices.Index([]string{"n1", "n2"}, nodes[1])
	c.killNode(second)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job ended %s (%s), want COMPLETED", j.State, j.Message)
	}
	var steps []api.Step
	if err := c.Client.Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", id), nil, &steps); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].State != api.StateRunning {
		t.Fatalf("step while its second node's noded is down after the job's end: %+v, want RUNNING", steps)
	}
	if n := sleepsRunning(t, task+1); n != 1 {
		t.Fatalf("%d tasks run on the node whose noded was killed, want 1 (it outlives noded)", n)
	}
	// squeue -s still lists it, as Slurm lists a completing job's steps.
	if r := c.slurmCmd(bin, dir, "squeue", "-s", "-h", "-o", "%i %N"); r.Code != 0 || r.Stdout != fmt.Sprintf("%d.0 n[1-2]\n", id) {
		t.Errorf("squeue -s while the step waits for its node: exit %d %q %q, want the step", r.Code, r.Stdout, r.Stderr)
	}
	c.StartNode(NodeOpts{Name: nodes[1], CPUs: 2, Mem: "1G"})
	c.WaitNodesUp(2, 15*time.Second)
	steps = c.waitStepsEnded(id, 60*time.Second)
	waitNoSleeps(t, task, 10*time.Second)
	waitNoSleeps(t, task+1, 10*time.Second)
	if st := steps[0]; st.State != api.StateCancelled || st.ExitCode != 0 || st.Signal == 0 || st.End == nil {
		t.Fatalf("step after the noded restart: %+v, want CANCELLED 0:SIGNAL", st)
	}
}

// A step whose tasks catch SIGTERM and exit 0 when their job's end
// stops them ends COMPLETED 0:0, as in Slurm 22.05, whose accounting sees
// only the status its nodes send; checked on the loopback Slurm
// (scripts/slurm-up.sh, DebugFlags=Steps): `srun bash -c 'trap "exit 0"
// TERM; sleep 100 & wait' &` in a script that exits, or in a job that
// scancel JOB cancels, ends with REQUEST_STEP_COMPLETE rc=0, COMPLETED.
// A cancel of the step itself (scancel JOB.STEP) SIGKILLs its tasks, the
// trap notwithstanding: CANCELLED 0:9, as in Slurm (rc=9, "task 0:
// Killed").
func TestStepThatCatchesItsJobsEnd(t *testing.T) {
	c, dir, bin := twoNodesWithSlurmNames(t)
	const task = 3160 // the tasks run `sleep 3160`
	caught := fmt.Sprintf(`sh -c 'trap "exit 0" TERM; echo $SLURM_PROCID >> up; sleep %d & wait'`, task)
	script := fmt.Sprintf(`srun -J cancelled -N1 -n1 --overlap %s &
until [ "$(cat up 2>/dev/null | wc -l)" -ge 1 ]; do sleep 0.1; done
scancel $SLURM_JOB_ID.0
wait
rm up
srun -J caught -N2 -n2 --overlap %s &
until [ "$(cat up 2>/dev/null | wc -l)" -ge 2 ]; do sleep 0.1; done
exit 0`, caught, caught)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=1", "-o", "out", "--wrap", script)
	if j := c.WaitEnded(id, 90*time.Second); j.State != api.StateCompleted {
		b, _ := os.ReadFile(filepath.Join(dir, "out"))
		t.Fatalf("job ended %s (%s); output %q", j.State, j.Message, b)
	}
	c.waitStepsEnded(id, 30*time.Second)
	waitNoSleeps(t, task, 10*time.Second)
	r := c.slurmCmd(bin, dir, "sacct", "-j", fmt.Sprint(id), "-P", "-n", "-o", "JobID,JobName,State,ExitCode")
	want := fmt.Sprintf("%[1]d|wrap|COMPLETED|0:0\n%[1]d.batch|batch|COMPLETED|0:0\n%[1]d.extern|extern|COMPLETED|0:0\n"+
		"%[1]d.0|cancelled|CANCELLED by 0|0:9\n%[1]d.1|caught|COMPLETED|0:0\n", id)
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("sacct -j %d: exit %d\n%s\nwant\n%s\nstderr %q", id, r.Code, r.Stdout, want, r.Stderr)
	}

	// The job cancelled (scancel JOB) while such a step runs.
	if err := os.Remove(filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	id = c.Submit(dir, "-N1", "-o", "out2", "--wrap", fmt.Sprintf("srun -J caught -n1 %s; sleep 1000", caught))
	waitFile(t, filepath.Join(dir, "up"), "0", 60*time.Second)
	if r := c.slurmCmd(bin, dir, "scancel", fmt.Sprint(id)); r.Code != 0 {
		t.Fatalf("scancel %d: exit %d %s", id, r.Code, r.Stderr)
	}
	if j := c.WaitEnded(id, 60*time.Second); j.State != api.StateCancelled {
		t.Fatalf("cancelled job ended %s (%s)", j.State, j.Message)
	}
	if steps := c.waitStepsEnded(id, 30*time.Second); len(steps) != 1 || steps[0].State != api.StateCompleted || steps[0].ExitCode != 0 || steps[0].Signal != 0 {
		t.Errorf("step that caught its cancelled job's SIGTERM: %+v, want COMPLETED 0:0", steps)
	}
	waitNoSleeps(t, task, 10*time.Second)
}

// A step whose task the OOM killer ended is OUT_OF_MEMORY 0:125 and srun
// says so and exits 1; its job, whose script goes on and exits 0, is
// COMPLETED.
// Slurm 22.05 on the loopback cluster with task/cgroup (ConstrainRAMSpace)
// shows the same for `srun -n1 python3 -c 'a = bytearray(400<<20)'` in a
// --mem=100M job: srun "task 0: Out Of Memory", slurmstepd "Detected 1
// oom-kill event(s) in StepId=5.0", REQUEST_STEP_COMPLETE rc=253
// (SIG_OOM: OUT_OF_MEMORY 0:125 in sacct), the job COMPLETED 0:0.
func TestStepOutOfMemory(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	bin := slurmBin(t, dir)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	script := `srun -J hog -n1 sh -c 'head -c 600M /dev/zero | tail' 2> hog.err
echo $? > hog.rc
srun -J calm -n1 true
exit 0`
	id := c.Submit(dir, "--mem", "128M", "-o", "out", "--wrap", script)
	if j := c.WaitEnded(id, 90*time.Second); j.State != api.StateCompleted {
		b, _ := os.ReadFile(filepath.Join(dir, "out"))
		t.Fatalf("job ended %s (%s), want COMPLETED; output %q", j.State, j.Message, b)
	}
	c.waitStepsEnded(id, 30*time.Second)
	r := c.slurmCmd(bin, dir, "sacct", "-j", fmt.Sprint(id), "-P", "-n", "-o", "JobID,JobName,State,ExitCode")
	want := fmt.Sprintf("%[1]d|wrap|COMPLETED|0:0\n%[1]d.batch|batch|COMPLETED|0:0\n%[1]d.extern|extern|COMPLETED|0:0\n"+
		"%[1]d.0|hog|OUT_OF_MEMORY|0:125\n%[1]d.1|calm|COMPLETED|0:0\n", id)
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("sacct -j %d: exit %d\n%s\nwant\n%s\nstderr %q", id, r.Code, r.Stdout, want, r.Stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "hog.err"))
	for _, s := range []string{"Detected 1 oom-kill event(s) in StepId=" + fmt.Sprint(id) + ".0", ": task 0: Out Of Memory\n"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("srun's stderr %q does not say %q", b, s)
		}
	}
	if rc, _ := os.ReadFile(filepath.Join(dir, "hog.rc")); string(rc) != "1\n" {
		t.Errorf("srun of the OOM-killed step exited %q, want 1 (as Slurm's after SIG_OOM)", rc)
	}
}
