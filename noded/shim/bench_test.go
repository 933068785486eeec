package shim_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/noded/shim"
)

// BenchmarkRunTrue is the node-side cost of one job that does nothing:
// container set-up, the script's `true`, collection and tear-down. It is
// the floor under the end-to-end job rate (docs/benchmarks.md). cpu-ms/op
// is the CPU time of shim.Run and of every process it started (runc's
// init, corral-init, the script), without the job directory's set-up.
func BenchmarkRunTrue(b *testing.B) {
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tj := mustJob(b, "#!/bin/sh\ntrue\n", nil)
		before := cpuTime(b)
		b.StartTimer()
		r := shim.Run(tj.dir, shim.Controls{})
		b.StopTimer()
		cpu += cpuTime(b) - before
		b.StartTimer()
		if r.State != "COMPLETED" {
			b.Fatalf("job ended %s: %s", r.State, r.Message)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time of this process and its reaped children.
func cpuTime(b *testing.B) time.Duration {
	var self, kids syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids); err != nil {
		b.Fatal(err)
	}
	var d time.Duration
	for _, tv := range []syscall.Timeval{self.Utime, self.Stime, kids.Utime, kids.Stime} {
		d += time.Duration(tv.Nano())
	}
	return d
}

// BenchmarkStepTrue is the node-side cost of a step of two tasks that do
// nothing, in a running job: the runner's exec of both into the job's
// container, srun's connection, the exits and Done (the runner in this
// process; the tasks' runc init is this test binary, larger than
// corral-shim).
func BenchmarkStepTrue(b *testing.B) {
	tj, end := startJob(b, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		srun := newFakeSrun(b, "tok", node)
		mustStep(b, tj, i, []int{0, 1}, []string{"/bin/true"}, srun.ln.Addr().String())
		res := shim.RunStep(tj.dir, i, shim.StepControls{})
		if res.ExitCode != 0 || res.Message != "" {
			b.Fatalf("step %d: %+v", i, res)
		}
		srun.writer(b)
		srun.collect(b, nil)
	}
}
