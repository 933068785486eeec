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
