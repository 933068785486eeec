package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Issue 13, acceptance 3 and salloc: interactive allocations.

// slurmPath is a directory holding srun and salloc as names of the
// corral-slurm binary, as bin/slurm does, for PATH.
func slurmPath(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"srun", "salloc"} {
		if err := os.Symlink(filepath.Join(binDir, "corral-slurm"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// interactiveEnv is a user's environment on the submit host: the cluster's
// socket and the Slurm names first on PATH, outside any allocation.
func (c *Cluster) interactiveEnv(t testing.TB) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "TMUX") {
			env = append(env, kv)
		}
	}
	return append(env, api.SocketEnv+"="+c.Socket, "PATH="+slurmPath(t)+":"+os.Getenv("PATH"))
}

var grantedRE = regexp.MustCompile(`salloc: Granted job allocation (\d+)`)

// salloc -N 2 runs its command here; srun inside it runs on both nodes
// of the allocation, labelled, and the allocation ends COMPLETED when
// the command exits 0.
func TestSallocTwoNodesSrunLabelled(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "2G"}, {Name: "n2", CPUs: 2, Mem: "2G"}}})
	c.endJobsAtCleanup()
	cmd := exec.Command(filepath.Join(binDir, "corral"), "salloc", "-N", "2", "srun", "-l", "sh", "-c", "echo $SLURMD_NODENAME")
	cmd.Env, cmd.Dir = c.interactiveEnv(t), jobDir(t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("salloc: %v\nstdout %q\nstderr %q", err, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !slicesHave(lines, "0: n1", "1: n2") && !slicesHave(lines, "0: n2", "1: n1") {
		t.Fatalf("srun -l inside salloc -N 2 printed %q, want lines 0: and 1: from n1 and n2", lines)
	}
	m := grantedRE.FindStringSubmatch(errb.String())
	if m == nil || !strings.Contains(errb.String(), "salloc: Relinquishing job allocation "+m[1]) {
		t.Fatalf("salloc's messages: %q", errb.String())
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted || j.ExitCode == nil || *j.ExitCode != 0 {
		t.Fatalf("allocation %d ended %s exit %v, want COMPLETED 0", id, j.State, j.ExitCode)
	}
}

func slicesHave(lines []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			return false
		}
	}
	return true
}

// srun outside an allocation makes one, runs the step and releases it:
// it exits 0 and leaves a COMPLETED job named after the command.
func TestSrunOutsideAnAllocation(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	cmd := exec.Command(filepath.Join(binDir, "corral"), "srun", "-n1", "true")
	cmd.Env, cmd.Dir = c.interactiveEnv(t), jobDir(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("srun -n1 true: %v: %s", err, out)
	}
	jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs after srun: %+v, %v", jobs, err)
	}
	j := c.WaitEnded(jobs[0].ID, 30*time.Second)
	if !j.Spec.Allocation || j.Name != "true" || j.State != api.StateCompleted || j.ExitCode == nil || *j.ExitCode != 0 {
		t.Fatalf("srun's allocation ended %+v, want a COMPLETED allocation named true", j)
	}
}

// Losing salloc (kill -9) releases its allocation: it stops renewing it,
// and ctld cancels it once the inactivity bound (15 s) has passed.
func TestSallocKilledReleasesTheAllocation(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	cmd := exec.Command(filepath.Join(binDir, "corral"), "salloc", "sleep", "300")
	cmd.Env, cmd.Dir = c.interactiveEnv(t), jobDir(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: the orphaned sleep keeps salloc's stderr open.
	errPath := filepath.Join(t.TempDir(), "salloc.err")
	errf, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	cmd.Stderr = errf
	stderr := func() string { b, _ := os.ReadFile(errPath); return string(b) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) // the orphaned sleep
	var id uint64
	deadline := time.Now().Add(30 * time.Second)
	for id == 0 {
		if m := grantedRE.FindStringSubmatch(stderr()); m != nil {
			id, _ = strconv.ParseUint(m[1], 10, 64)
		} else if time.Now().After(deadline) {
			t.Fatalf("salloc not granted: %q", stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if j := c.Job(id); j.State != api.StateRunning {
		t.Fatalf("allocation %d is %s right after salloc died, want RUNNING until the bound", id, j.State)
	}
	if j := c.WaitEnded(id, 60*time.Second); j.State != api.StateCancelled {
		t.Fatalf("abandoned allocation %d ended %s, want CANCELLED", id, j.State)
	}
	if l := c.Logs("ctld"); !strings.Contains(l, fmt.Sprintf("job %d: its client stopped renewing the allocation", id)) {
		t.Fatalf("ctld's log does not say why it cancelled %d:\n%s", id, l)
	}
}

// srun --pty /bin/sh through a real terminal (tmux): an interactive shell
// on a compute node in a new allocation; typing exit ends the job
// COMPLETED.
func TestSrunPtyShellThroughATerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("needs tmux for a real terminal: not installed")
	}
	c := StartCluster(t, ClusterOpts{})
	c.endJobsAtCleanup()
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	dir := jobDir(t)
	status := filepath.Join(dir, "srun.status")
	sock := filepath.Join(shortTempDir(t), "tmux")
	run := func(args ...string) string {
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = c.interactiveEnv(t)
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "kill-server" {
			t.Fatalf("tmux %q: %v: %s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("kill-server") })
	run("new-session", "-d", "-x", "100", "-y", "30", "-c", dir,
		fmt.Sprintf("srun --pty %s; echo $? > %s; sleep 60", shell, status))
	screen := func(want *regexp.Regexp, what string) []string {
		deadline := time.Now().Add(30 * time.Second)
		for {
			pane := run("capture-pane", "-p")
			if m := want.FindStringSubmatch(pane); m != nil {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the terminal shows:\n%s\nctld:\n%s", what, pane, c.Logs("ctld"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	screen(regexp.MustCompile(`(?m)[#$]\s*$`), "a prompt")
	run("send-keys", "echo hi $SLURM_JOB_ID", "Enter")
	m := screen(regexp.MustCompile(`(?m)^hi (\d+)\s*$`), "the shell's answer")
	id, _ := strconv.ParseUint(m[1], 10, 64)
	run("send-keys", "exit", "Enter")
	waitFile(t, status, "\n", 30*time.Second)
	if b, _ := os.ReadFile(status); string(b) != "0\n" {
		t.Fatalf("srun --pty exited %q, want 0", b)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted || !j.Spec.Allocation {
		t.Fatalf("the interactive allocation %d ended %s, want COMPLETED", id, j.State)
	}
}
