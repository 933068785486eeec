package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestJobSocket (issue 13, Security): inside a 2-node batch job, whose
// container cannot see ctld's socket (under the host's /tmp), srun,
// squeue and scontrol reach the controller with no flags through the
// socket noded provides to the job, from the batch script and from a
// task on each node (each through its own node's socket). Another user's job cannot start a
// step in it or cancel it through its own socket, a process on the host
// outside the job is refused by this job's socket, and none of that
// changes the job.
func TestJobSocket(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2}, {Name: "n2", CPUs: 2}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	// t.TempDir's parent is 0700; the other user's job must pass through it.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := slurmBin(t, dir) // in the submit directory, which the job sees
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	script := fmt.Sprintf(`echo "socket=$CORRAL_SOCKET"
if [ -e %[1]s ]; then echo ctld-visible; else echo ctld-hidden; fi
srun -l sh -c 'echo $SLURMD_NODENAME $(squeue -h -j "$SLURM_JOB_ID" -o %%T)' | sort -k2
squeue -h -j "$SLURM_JOB_ID" -o '%%i %%T'
scontrol show job "$SLURM_JOB_ID" | tr ' ' '\n' | grep '^JobState='
echo ready > inside.ready
while [ ! -e outsider.done ]; do sleep 0.05; done
`, c.Socket)
	job := c.Submit(dir, "-N", "2", "--ntasks-per-node", "1", "-t", "2", "-o", "inside.out", "--wrap", script)
	waitFile(t, filepath.Join(dir, "inside.ready"), "ready", 60*time.Second)

	// A root process on the host, outside the job, at the job's socket.
	sock := filepath.Join(c.Dir, "node-n1", "jobs", fmt.Sprint(job), "ctl", "ctld.sock")
	if _, err := api.NewClient(sock).Jobs(context.Background(), api.JobFilter{}); err == nil || !strings.Contains(err.Error(), "not one of the job's") {
		t.Errorf("a host process outside the job at its socket %s: %v, want refused (not one of the job's)", sock, err)
	}

	outsider := c.Submit(dir, "--uid", "65534", "-t", "1", "-o", "outsider.out", "--wrap", fmt.Sprintf(
		`srun --jobid %[1]d --overlap true; echo "srun=$?"; scancel %[1]d; echo "scancel=$?"; touch outsider.done`, job))
	if j := c.WaitEnded(outsider, 60*time.Second); j.State != api.StateCompleted {
		t.Fatalf("the outsider's job ended %s (%s)", j.State, j.Message)
	}
	if j := c.WaitEnded(job, 60*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job %d ended %s (%s)\n%s", job, j.State, j.Message, strings.Join(readLines(t, filepath.Join(dir, "inside.out")), "\n"))
	}
	// The step's rank 0 is on the batch node, whichever that is.
	want := []string{"socket=" + api.DefaultSocket, "ctld-hidden", "0: n1 RUNNING", "1: n2 RUNNING", fmt.Sprintf("%d RUNNING", job), "JobState=RUNNING"}
	got := readLines(t, filepath.Join(dir, "inside.out"))
	if len(got) == len(want) && got[2] == "1: n1 RUNNING" && got[3] == "0: n2 RUNNING" {
		want[2], want[3] = got[2], got[3]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inside the job:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out := strings.Join(readLines(t, filepath.Join(dir, "outsider.out")), "\n")
	t.Logf("the other user's job printed:\n%s", out)
	if strings.Contains(out, "srun=0") || strings.Contains(out, "scancel=0") || !strings.Contains(out, "srun=") || !strings.Contains(out, "scancel=") {
		t.Errorf("another user's srun --jobid and scancel of the job were not both refused:\n%s", out)
	}
	var steps []api.Step
	if err := c.Client.Do(context.Background(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps", job), nil, &steps); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].StepID != 0 || steps[0].Tasks != 2 {
		t.Errorf("job %d's steps %+v, want its own srun's alone (step 0, 2 tasks)", job, steps)
	}
}

// TestJobSocketAfterNodedRestart: kill -9 of noded takes the job's
// socket down with it; the restarted noded serves it again at the same
// place in the running container, and srun inside the job works on.
func TestJobSocketAfterNodedRestart(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	job := c.Submit(dir, "-t", "2", "-o", "restart.out", "--wrap", `srun echo before
echo ready > first.done
while [ ! -e restarted ]; do sleep 0.05; done
srun echo after
squeue -h -j "$SLURM_JOB_ID" -o %T`)
	waitFile(t, filepath.Join(dir, "first.done"), "ready", 60*time.Second)
	c.killNode(0)
	c.StartNode(node)
	// ctld may not have noticed the kill, so "the node is up" says nothing
	// about the new noded; the job's socket answering does.
	sock := filepath.Join(c.Dir, "node-"+node.Name, "jobs", strconv.FormatUint(job, 10), "ctl", "ctld.sock")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted noded does not serve the job's socket: %v\n%s", err, c.Logs("noded-"+node.Name))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "restarted"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j := c.WaitEnded(job, 60*time.Second)
	got := strings.Join(readLines(t, filepath.Join(dir, "restart.out")), "\n")
	if j.State != api.StateCompleted || got != "before\nafter\nRUNNING" {
		t.Fatalf("job ended %s (%s), output:\n%s\nwant COMPLETED with before, after, RUNNING", j.State, j.Message, got)
	}
}
