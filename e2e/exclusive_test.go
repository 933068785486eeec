package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestExclusive: with the real daemons, an --exclusive job that asks for
// one CPU sees all of the node's CPUs (SLURM_CPUS_ON_NODE and its
// cgroup's cpuset), squeue and scontrol say OverSubscribe NO, and a job
// submitted while it runs waits until it ends, though it asks for
// nothing the node lacks once the exclusive job is gone.
func TestExclusive(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "dev1", CPUs: 2, Mem: "2G"}}})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	sbatch := func(args ...string) uint64 {
		t.Helper()
		r := c.slurmCmd(bin, dir, "sbatch", append([]string{"--parsable", "--mem", "100M"}, args...)...)
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("sbatch %v: exit %d %s", args, r.Code, r.Stderr)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
		if err != nil {
			t.Fatalf("sbatch printed %q", r.Stdout)
		}
		return id
	}
	stop := filepath.Join(dir, "stop")
	whole := sbatch("--exclusive", "-c", "1", "-o", "whole.out", "--wrap",
		`echo "cpus=$SLURM_CPUS_ON_NODE nproc=$(nproc)"; while [ ! -e `+stop+` ]; do sleep 0.1; done`)
	c.WaitState(whole, api.StateRunning, 30*time.Second)
	later := sbatch("-c", "1", "-o", "later.out", "--wrap", "echo later")
	c.WaitJob(later, 30*time.Second, "pending behind the exclusive job", func(j *api.Job) bool {
		return j.State == api.StatePending && j.Reason == api.ReasonResources
	})

	id := strconv.FormatUint(whole, 10)
	if r := c.slurmCmd(bin, dir, "squeue", "-h", "-j", id, "-o", "%h %C"); r.Stdout != "NO 2\n" {
		t.Errorf("squeue -o '%%h %%C' of the exclusive job printed %q (exit %d %s)", r.Stdout, r.Code, r.Stderr)
	}
	if r := c.slurmCmd(bin, dir, "scontrol", "show", "job", id); !strings.Contains(r.Stdout, " OverSubscribe=NO ") || !strings.Contains(r.Stdout, " NumCPUs=2 ") {
		t.Errorf("scontrol show job %s lacks OverSubscribe=NO and NumCPUs=2:\n%s", id, r.Stdout)
	}

	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := c.WaitEnded(whole, 30*time.Second); j.State != api.StateCompleted {
		t.Fatalf("exclusive job ended %s", j.State)
	}
	out, err := os.ReadFile(filepath.Join(dir, "whole.out"))
	if err != nil || strings.TrimSpace(string(out)) != "cpus=2 nproc=2" {
		t.Errorf("the exclusive job saw %q (%v), want all 2 CPUs", out, err)
	}
	if j := c.WaitEnded(later, 30*time.Second); j.State != api.StateCompleted || j.StartTime.Before(*c.Job(whole).EndTime) {
		t.Errorf("the later job: %s, started %v, before the exclusive job ended %v", j.State, j.StartTime, c.Job(whole).EndTime)
	}
}
