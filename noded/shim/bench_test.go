package shim_test

import (
	"testing"

	"github.com/corral-hpc/corral/noded/shim"
)

// BenchmarkRunTrue is the node-side cost of one job that does nothing:
// container set-up, the script's `true`, collection and tear-down. It is
// the floor under the end-to-end job rate (docs/benchmarks.md).
func BenchmarkRunTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		tj := mustJob(b, "#!/bin/sh\ntrue\n", nil)
		r := shim.Run(tj.dir, shim.Controls{})
		if r.State != "COMPLETED" {
			b.Fatalf("job ended %s: %s", r.State, r.Message)
		}
	}
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
