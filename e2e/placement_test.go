package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestNodelistAndExclude: on two nodes, -x keeps jobs off a node even
// when it is the idle one, -w puts a job on the node it names, squeue
// and --test-only show it, and a -w naming no node of the partition is
// refused at submit.
func TestNodelistAndExclude(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "dev1", CPUs: 2, Mem: "2G"}, {Name: "dev2", CPUs: 2, Mem: "2G"}}})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	sbatch := func(args ...string) uint64 {
		t.Helper()
		r := c.slurmCmd(bin, dir, "sbatch", append([]string{"--parsable", "-c", "1", "--mem", "100M"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("sbatch %v: exit %d %s", args, r.Code, r.Stderr)
		}
		if r.Stderr != "" {
			t.Errorf("sbatch %v warned: %s", args, r.Stderr)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
		if err != nil {
			t.Fatalf("sbatch printed %q", r.Stdout)
		}
		return id
	}
	// Three one-CPU jobs that exclude dev1: two fill dev2, the third
	// waits though dev1 is idle.
	var excluded []uint64
	for i := 0; i < 3; i++ {
		excluded = append(excluded, sbatch("-x", "dev1", "--wrap", "sleep 60"))
	}
	running := 0
	for _, id := range excluded[:2] {
		j := c.WaitState(id, api.StateRunning, 30*time.Second)
		if len(j.Nodes) != 1 || j.Nodes[0] != "dev2" {
			t.Errorf("job %d with -x dev1 runs on %v", id, j.Nodes)
		}
		running++
	}
	c.WaitJob(excluded[2], 30*time.Second, "pending for resources", func(j *api.Job) bool {
		return j.State == api.StatePending && j.Reason == api.ReasonResources
	})

	// -w dev1 goes to dev1; squeue shows the request.
	onDev1 := sbatch("-w", "dev1", "--wrap", "sleep 60")
	if j := c.WaitState(onDev1, api.StateRunning, 30*time.Second); len(j.Nodes) != 1 || j.Nodes[0] != "dev1" {
		t.Errorf("job with -w dev1 runs on %v", j.Nodes)
	}
	if q := c.slurmCmd(bin, dir, "squeue", "-h", "-j", strconv.FormatUint(onDev1, 10), "-o", "%n %N"); q.Stdout != "dev1 dev1\n" {
		t.Errorf("squeue -o '%%n %%N' for the -w job printed %q (exit %d %s)", q.Stdout, q.Code, q.Stderr)
	}
	// --test-only: a job excluded from dev2 would start on dev1, which has a CPU left.
	if r := c.slurmCmd(bin, dir, "sbatch", "--test-only", "-c", "1", "--mem", "100M", "-x", "dev2", "--wrap", "true"); r.Code != 0 ||
		!strings.Contains(r.Stderr+r.Stdout, "dev1") || strings.Contains(r.Stderr+r.Stdout, "dev2") {
		t.Errorf("sbatch --test-only -x dev2: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// Refused at submit, with one line naming the problem.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-w", "dev9"}, "node dev9 is not in partition"},
		{[]string{"-x", "dev[1-2]"}, "pass --exclude: it could never run"},
		{[]string{"-w", "dev1", "-x", "dev1"}, "--nodelist and --exclude both name dev1"},
	} {
		r := c.slurmCmd(bin, dir, "sbatch", append(tc.args, "--wrap", "true")...)
		if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("sbatch %v: exit %d, stderr %q, want one line with %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
	for _, id := range append(excluded, onDev1) {
		c.Corral("cancel", strconv.FormatUint(id, 10))
	}
}

// TestConstraint: a feature set on a NodeName line in corral.conf takes
// -C jobs to that node; a feature no node has is refused at submit.
func TestConstraint(t *testing.T) {
	c := StartCluster(t, ClusterOpts{
		Nodes:  []NodeOpts{{Name: "dev1", CPUs: 2, Mem: "2G"}, {Name: "dev2", CPUs: 2, Mem: "2G"}},
		Config: "PartitionName=batch Nodes=ALL Default=YES\nNodeName=dev2 Features=big,ib\n",
	})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	r := c.slurmCmd(bin, dir, "sbatch", "--parsable", "-c", "1", "--mem", "100M", "-C", "big&ib", "--wrap", "sleep 60")
	if r.Code != 0 {
		t.Fatalf("sbatch -C 'big&ib': exit %d %s", r.Code, r.Stderr)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("sbatch printed %q", r.Stdout)
	}
	if j := c.WaitState(id, api.StateRunning, 30*time.Second); len(j.Nodes) != 1 || j.Nodes[0] != "dev2" {
		t.Errorf("job with -C 'big&ib' runs on %v, want dev2", j.Nodes)
	}
	c.Corral("cancel", strconv.FormatUint(id, 10))
	if r := c.slurmCmd(bin, dir, "sinfo", "-h", "-N", "-o", "%N %f"); r.Stdout != "dev1 (null)\ndev2 big,ib\n" {
		t.Errorf("sinfo -h -N -o '%%N %%f' printed %q (exit %d %s)", r.Stdout, r.Code, r.Stderr)
	}
	r = c.slurmCmd(bin, dir, "sbatch", "-C", "gpu|huge", "--wrap", "true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "pass --constraint gpu|huge: it could never run") {
		t.Errorf("sbatch -C 'gpu|huge': exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = c.slurmCmd(bin, dir, "sbatch", "-C", "big*2", "--wrap", "true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "node counts (feature*N) are not supported") {
		t.Errorf("sbatch -C 'big*2': exit %d, stderr %q", r.Code, r.Stderr)
	}
}
