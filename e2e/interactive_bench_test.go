package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
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
