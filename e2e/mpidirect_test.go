package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Issue 13, acceptance 5, direct launch: `srun --mpi=pmi2` starts an
// MPICH program's 4 ranks over both nodes of a batch job with no
// launcher of MPI's own; the runners serve them PMI (PMI-1, which
// Debian's MPICH 4.0.2 speaks over PMI_FD) and relay the fences through
// srun; the ranks meet and the allreduce is right, placed in blocks and
// cyclically.
//
// The ranks of the two nodes talk over TCP as with mpiexec, so MPICH's
// MPI_Finalize may hang as there (TestMPICHMpiexecInABatchJob): the test
// then cancels the job once all 4 ranks have reported, and says so.
func TestMPICHDirectLaunch(t *testing.T) {
	needCommands(t, "mpicc.mpich")
	c, dir := mpiCluster(t)
	app := buildMPI(t, "mpicc.mpich", "allreduce.c", dir, "allreduce-mpich")
	runMPIJob(t, c, dir, "direct", "srun --mpi=pmi2 -N2 -n4 "+app, true)
	// Cyclic placement: ranks 0 and 2 on one node, 1 and 3 on the other;
	// PMI_process_mapping says so, or MPICH's shared-memory paths would
	// pair ranks of different nodes.
	runMPIJob(t, c, dir, "direct-cyclic", "srun --mpi=pmi2 -m cyclic -N2 -n4 "+app, true)
}

// TestMPICHDirectLaunchAbort: with MpiDefault=pmi2 in corral.conf a plain
// `srun -n2 ./app` serves PMI; rank 1's MPI_Abort(..., 7) kills rank 0,
// which waits in a barrier, srun exits 7 and the step is recorded FAILED
// with exit code 7.
func TestMPICHDirectLaunchAbort(t *testing.T) {
	needCommands(t, "mpicc.mpich")
	c := StartCluster(t, ClusterOpts{
		Config: "PartitionName=batch Nodes=ALL Default=YES\nMpiDefault=pmi2\n",
		Nodes:  []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	dir := mustOpenDir(t, "corral-mpi-", 0o777)
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	app := buildMPI(t, "mpicc.mpich", "mpiabort.c", dir, "abort-mpich")
	out := filepath.Join(dir, "abort.out")
	id := c.Submit(dir, "--uid", "nobody", "-N2", "--ntasks-per-node=1", "-t", "5", "-o", out, "--wrap",
		"srun -n2 "+app+`; echo "srun exit $?"`)
	j := c.WaitEnded(id, 90*time.Second)
	b, _ := os.ReadFile(out)
	text := string(b)
	if j.State != api.StateCompleted || !strings.Contains(text, "srun exit 7\n") ||
		!strings.Contains(text, ": task 1: task 1 called MPI_Abort with exit code 7") ||
		strings.Contains(text, "passed a barrier") {
		t.Fatalf("job %d ended %s (%s); output:\n%s", id, j.State, j.Message, text)
	}
	var step *api.Step
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		steps, err := c.Client.Steps(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range steps {
			if steps[i].StepID == 0 && steps[i].State.Terminal() {
				step = &steps[i]
			}
		}
		if step != nil {
			break
		}
	}
	if step == nil || step.State != api.StateFailed || step.ExitCode != 7 {
		t.Errorf("step %d.0: %+v, want FAILED with exit code 7", id, step)
	}
}
