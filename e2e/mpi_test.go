package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// needCommands skips the test, naming what is missing, when a program it
// runs is not installed (scripts/install-deps.sh installs them).
func needCommands(t *testing.T, names ...string) {
	t.Helper()
	var missing []string
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Skipf("needs %s (scripts/install-deps.sh installs them)", strings.Join(missing, ", "))
	}
}

// mpiCluster is a 2-node cluster whose jobs reach ctld and find the
// Slurm names on their PATH, with a work directory every job user can
// write.
func mpiCluster(t *testing.T) (*Cluster, string) {
	c := StartCluster(t, ClusterOpts{SocketInJobs: true,
		Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	dir := mustOpenDir(t, "corral-mpi-", 0o777)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	t.Setenv(api.SocketEnv, c.Socket)
	return c, dir
}

// buildMPI compiles testdata/allreduce.c with the given compiler wrapper
// into dir.
func buildMPI(t *testing.T, mpicc, dir, name string) string {
	src, err := filepath.Abs(filepath.Join("testdata", "allreduce.c"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if b, err := exec.Command(mpicc, "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", mpicc, err, b)
	}
	return out
}

// runMPIJob runs script as a 2-node, 2-tasks-per-node batch job of
// nobody and checks its output: 4 ranks, two on each node, each with the
// allreduce sum 0+1+2+3.
func runMPIJob(t *testing.T, c *Cluster, dir, name, script string) {
	t.Helper()
	out := name + ".out"
	script = `srun -n2 --ntasks-per-node=1 sh -c 'echo $SLURMD_NODENAME > /tmp/node' && ` + script
	id := c.Submit(dir, "--uid", "nobody", "-N2", "--ntasks-per-node=2", "-t", "5", "-o", out, "--wrap", script)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, out))
			t.Logf("%s: job %d's output:\n%s", name, id, b)
		}
	})
	j := c.WaitEnded(id, 90*time.Second)
	b, _ := os.ReadFile(filepath.Join(dir, out))
	if j.State != api.StateCompleted {
		t.Fatalf("%s: job %d ended %s (%s); output:\n%s", name, id, j.State, j.Message, b)
	}
	var ranks []string
	perNode := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		var rank, size, sum int
		var node string
		if n, _ := fmt.Sscanf(l, "rank %d of %d on %s sum %d", &rank, &size, &node, &sum); n != 4 {
			continue
		}
		if size != 4 || sum != 6 {
			t.Errorf("%s: %q, want a world of 4 and the sum 6", name, l)
		}
		ranks = append(ranks, fmt.Sprint(rank))
		perNode[node]++
	}
	slices.Sort(ranks)
	if !slices.Equal(ranks, []string{"0", "1", "2", "3"}) || perNode["n1"] != 2 || perNode["n2"] != 2 {
		t.Fatalf("%s: ranks %v, per node %v; want 0-3, two on each of n1 and n2; output:\n%s", name, ranks, perNode, b)
	}
	t.Logf("%s:\n%s", name, b)
}

// Issue 13, acceptance 5: Open MPI's mpirun, called with no hostfile and
// no options in a 2-node batch job, finds the allocation in the SLURM_*
// variables and starts its daemon on the other node with srun (plm
// slurm); the 4 ranks, two in each node's container, meet and the
// allreduce is right.
func TestOpenMPIMpirunInABatchJob(t *testing.T) {
	needCommands(t, "mpicc.openmpi", "mpirun.openmpi")
	c, dir := mpiCluster(t)
	app := buildMPI(t, "mpicc.openmpi", dir, "allreduce-openmpi")
	runMPIJob(t, c, dir, "openmpi", "mpirun.openmpi "+app)
}
