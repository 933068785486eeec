package ctld

import (
	"context"
	"io"
	"log"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// BenchmarkArraySubmit10k measures one durable submit of a 10,000-task
// array over the real Unix socket (the answer means its record is on
// disk). Run: go test -run '^$' -bench ArraySubmit10k -benchtime 200x ./ctld/
func BenchmarkArraySubmit10k(b *testing.B) {
	tc := MustServer(b, func(c *Config) { c.Logger = log.New(io.Discard, "", 0) })
	spec := arraySpec(b, "bench", "0-9999%16")
	var worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec}); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
	b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "tasks/s")
}
