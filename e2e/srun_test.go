package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Issue 13 with the real binaries: srun from the submitting host with
// --jobid starts a step in a running 2-node job. Its 4 tasks run in the
// job's containers, two on each node, with Slurm's task variables; the
// output comes back labelled; a failing task's exit code is srun's; a
// task sees the batch script's files in the job's private /tmp on its
// node; a Ctrl-C to srun reaches every task.
func TestSrunInARunningJob(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	work := jobDir(t)
	id := c.Submit(work, "-N2", "--ntasks-per-node=2", "-o", "/dev/null",
		"--wrap", "echo from-batch > /tmp/mark; sleep 300")
	// The script runs on the job's first node; steps list the job's nodes
	// in the same order.
	nodes := c.WaitState(id, api.StateRunning, 60*time.Second).Nodes
	if len(nodes) != 2 {
		t.Fatalf("job on %v, want 2 nodes", nodes)
	}
	job := strconv.FormatUint(id, 10)

	// The mark appears once the script ran its first line.
	var r Result
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		r = runCorral(t, c.Socket, work, "srun", "--jobid", job, "-N1", "-n1", "-w", nodes[0], "cat", "/tmp/mark")
		if r.Code == 0 {
			break
		}
	}
	if r.Code != 0 || r.Stdout != "from-batch\n" {
		t.Fatalf("the batch script's /tmp from a step on its node: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}

	r = runCorral(t, c.Socket, work, "srun", "--jobid", job, "--ntasks-per-node=2", "-l", "sh", "-c",
		`echo "$SLURM_PROCID $SLURM_LOCALID $SLURMD_NODENAME $SLURM_NTASKS $SLURM_STEP_NUM_NODES $SLURM_NODEID"`)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	slices.Sort(lines)
	want := []string{"0: 0 0 " + nodes[0] + " 4 2", "1: 1 1 " + nodes[0] + " 4 2", "2: 2 0 " + nodes[1] + " 4 2", "3: 3 1 " + nodes[1] + " 4 2"}
	nodeIDs := map[string]string{} // node name: its SLURM_NODEID
	for i, l := range lines {
		if i < len(want) && strings.HasPrefix(l, want[i]+" ") {
			f := strings.Fields(l)
			if id, seen := nodeIDs[f[3]]; seen && id != f[6] {
				t.Errorf("%s: tasks of one node see SLURM_NODEID %s and %s", f[3], id, f[6])
			}
			nodeIDs[f[3]] = f[6]
			lines[i] = want[i]
		}
	}
	if r.Code != 0 || !slices.Equal(lines, want) || len(nodeIDs) != 2 || nodeIDs[nodes[0]] == nodeIDs[nodes[1]] {
		t.Fatalf("4 tasks over 2 nodes: exit %d, stdout %q, want lines %q and node IDs 0 and 1; stderr %q", r.Code, r.Stdout, want, r.Stderr)
	}

	r = runCorral(t, c.Socket, work, "srun", "--jobid", job, "-n2", "sh", "-c", `exit $((SLURM_PROCID + 3))`)
	if r.Code != 4 || !strings.Contains(r.Stderr, "srun: error: "+nodes[1]+": task 1: Exited with exit code 4") {
		t.Fatalf("failing tasks: exit %d, stderr %q; want 4 (the highest)", r.Code, r.Stderr)
	}

	srunInterrupted(t, c, work, job)

	if r := c.Corral("cancel", job); r.Code != 0 {
		t.Fatalf("cancel: %d %q", r.Code, r.Stderr)
	}
	c.WaitEnded(id, 60*time.Second)
}

// srunInterrupted: a Ctrl-C (SIGINT) reaching srun reaches every task on
// every node; srun says so as Slurm does and exits with the tasks' status.
func srunInterrupted(t *testing.T, c *Cluster, work, job string) {
	cmd := exec.Command(filepath.Join(binDir, "corral"), "srun", "--jobid", job, "-n2", "-l", "sh", "-c",
		`trap 'echo got-INT; exit 7' INT; echo ready; while :; do sleep 0.1; done`)
	cmd.Env = append(os.Environ(), api.SocketEnv+"="+c.Socket)
	cmd.Dir = work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var got []string
	for ready := 0; ready < 2 && lines.Scan(); {
		got = append(got, lines.Text())
		if strings.HasSuffix(lines.Text(), ": ready") {
			ready++
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	// Should the tasks not end, srun would wait for them for ever.
	guard := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer guard.Stop()
	for lines.Scan() {
		got = append(got, lines.Text())
	}
	err = cmd.Wait()
	slices.Sort(got)
	want := []string{"0: got-INT", "0: ready", "1: got-INT", "1: ready"}
	if cmd.ProcessState.ExitCode() != 7 || !slices.Equal(got, want) ||
		!strings.Contains(stderr.String(), "srun: interrupt (one more within 1 sec to abort)") {
		t.Fatalf("Ctrl-C to srun: %v, output %q, want %q; stderr %q", err, got, want, stderr.String())
	}
}

// Issue 13, acceptance 1, inside the batch script: a plain srun in a
// -N2 --ntasks-per-node=2 job runs 4 tasks (srun reads SLURM_NTASKS from
// the batch environment, as Slurm's does), two on each node; srun of a
// failing task returns its exit code to the script.
func TestSrunInABatchScript(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	id := c.Submit(dir, "-N2", "--ntasks-per-node=2", "-o", "out", "--wrap",
		`srun -l sh -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURMD_NODENAME' | sort
srun -n1 sh -c 'exit 3'; echo "rc=$?"`)
	j := c.WaitEnded(id, 60*time.Second)
	// srun's notice that it waits for the first step's end to reach ctld
	// depends on timing.
	got := slices.DeleteFunc(readLines(t, filepath.Join(dir, "out")), func(l string) bool {
		return strings.HasPrefix(l, "srun: Job ") || strings.HasPrefix(l, "srun: Step created")
	})
	if j.State != api.StateCompleted || len(j.Nodes) != 2 {
		t.Fatalf("job %s on %v (%s):\n%s", j.State, j.Nodes, j.Message, strings.Join(got, "\n"))
	}
	first, second := j.Nodes[0], j.Nodes[1]
	want := []string{"0: 0 0 " + first, "1: 1 1 " + first, "2: 2 0 " + second, "3: 3 1 " + second,
		"srun: error: " + first + ": task 0: Exited with exit code 3", "rc=3"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the script printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A script that asks only for tasks (-n, no -N), more than a node has
// CPUs for, runs as it does under Slurm: the tasks spread over the nodes
// they need, and srun in it starts them all, two on each of two nodes of
// 2 CPUs for -n 4, two and one for -n 3.
func TestTasksWithoutANodeCountSpreadOverNodes(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	for _, tc := range []struct {
		ntasks, perNode string
		onSecond        []int // the ranks on the job's second node
	}{{"4", "2(x2)", []int{2, 3}}, {"3", "2,1", []int{2}}} {
		out := "out" + tc.ntasks
		id := c.Submit(dir, "-n", tc.ntasks, "-o", out, "--wrap",
			`echo "$SLURM_JOB_NUM_NODES $SLURM_NTASKS $SLURM_TASKS_PER_NODE"
srun sh -c 'echo $SLURM_PROCID $SLURMD_NODENAME' | sort -n`)
		j := c.WaitEnded(id, 60*time.Second)
		got := slices.DeleteFunc(readLines(t, filepath.Join(dir, out)), func(l string) bool { return strings.HasPrefix(l, "srun: ") })
		if j.State != api.StateCompleted || len(j.Nodes) != 2 {
			t.Fatalf("-n %s: job %s on %v (%s):\n%s", tc.ntasks, j.State, j.Nodes, j.Message, strings.Join(got, "\n"))
		}
		want := "2 " + tc.ntasks + " " + tc.perNode
		for rank := 0; rank < 2+len(tc.onSecond); rank++ {
			node := j.Nodes[0]
			if slices.Contains(tc.onSecond, rank) {
				node = j.Nodes[1]
			}
			want += "\n" + strconv.Itoa(rank) + " " + node
		}
		if strings.Join(got, "\n") != want {
			t.Errorf("-n %s: job %s on %v (%s), printed:\n%s\nwant:\n%s", tc.ntasks, j.State, j.Nodes, j.Message, strings.Join(got, "\n"), want)
		}
	}
}

// srun's environment and MPMD options with the real daemons: --export
// passes to the tasks what sbatch's --export would, -D sets their
// directory, --multi-prog runs each task's line of the file, and an
// option corral ignores says so, unless -Q.
func TestSrunExportChdirMultiProg(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	t.Setenv("FOO", "foo")
	if err := os.WriteFile(filepath.Join(dir, "mp.conf"), []byte("0 /bin/echo first %t\n1 /bin/echo second %t %o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := c.Submit(dir, "-n2", "-o", "out", "--wrap", `srun -n1 --export=NONE /bin/sh -c 'echo none ${FOO:-unset} ${SLURM_JOB_ID:+job}'
srun -n1 --export=ALL,BAR=bar /bin/sh -c 'echo all $FOO $BAR'
srun -n1 --export=BAR=bar /bin/sh -c 'echo list ${FOO:-unset} $BAR'
srun -n1 -D /tmp pwd
srun -n2 -l --multi-prog mp.conf | sort
srun -n1 --hint=nomultithread true 2>&1
srun -n1 -Q --hint=nomultithread true 2>&1
echo end`)
	j := c.WaitEnded(id, 60*time.Second)
	got := slices.DeleteFunc(readLines(t, filepath.Join(dir, "out")), func(l string) bool {
		return strings.HasPrefix(l, "srun: Job ") || strings.HasPrefix(l, "srun: Step created")
	})
	want := []string{"none unset job", "all foo bar", "list unset bar", "/tmp", "0: first 0", "1: second 1 0",
		"srun: warning: --hint is ignored: corral does not bind tasks to cores or threads", "end"}
	if j.State != api.StateCompleted || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("job %s (%s), printed:\n%s\nwant:\n%s", j.State, j.Message, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
