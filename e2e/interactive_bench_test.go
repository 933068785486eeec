package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// BenchmarkSrunOutsideAllocation: `corral srun -n1 true` outside an
// allocation, the whole process (allocation, step, release) one after
// the other on an idle node. Reports the median and p90.
func BenchmarkSrunOutsideAllocation(b *testing.B) {
	c := StartCluster(b, ClusterOpts{})
	env, dir := c.interactiveEnv(b), jobDir(b)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(filepath.Join(binDir, "corral"), "srun", "-n1", "true")
		cmd.Env, cmd.Dir = env, dir
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("srun -n1 true: %v: %s", err, out)
		}
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkSrunInAllocation: whole `corral srun --jobid J --overlap`
// processes into a running 2-node job, one after the other: "1node" is
// `-N1 -n2 true` on the first node, "2nodes" is `-N2 -n4 true`, two tasks
// on each node. Each run asks ctld for the step, launches it on the
// nodes, execs the tasks into the job's containers and waits for their
// ends. Reports the median and p90.
func BenchmarkSrunInAllocation(b *testing.B) {
	c := StartCluster(b, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}, {Name: "n2", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(b)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=2", "-o", "/dev/null", "--wrap", "sleep 3000")
	nodes := c.WaitState(id, api.StateRunning, 60*time.Second).Nodes
	job := strconv.FormatUint(id, 10)
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"1node", []string{"-N1", "-n2", "-w", nodes[0]}},
		{"2nodes", []string{"-N2", "-n4"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := append(append([]string{"srun", "--jobid", job, "--overlap"}, bc.args...), "true")
			times := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(filepath.Join(binDir, "corral"), args...)
				cmd.Env, cmd.Dir = append(os.Environ(), api.SocketEnv+"="+c.Socket), dir
				t0 := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %v: %s", args, err, out)
				}
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}
