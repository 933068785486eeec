package ctld

import (
	"context"
	"io"
	"log"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// BenchmarkSubmitParallel measures durable submits over the real Unix
// socket from 32 concurrent clients (each answer means the job's commit is
// on disk). Run: go test -run '^$' -bench SubmitParallel -benchtime 20000x ./ctld/
func BenchmarkSubmitParallel(b *testing.B) {
	tc := MustServer(b, func(c *Config) { c.Logger = log.New(io.Discard, "", 0) })
	const clients = 32
	b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	spec := script("bench")
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec}); err != nil {
				failed.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d submits failed", n)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "submits/s")
}

// BenchmarkFreedToLaunched measures the time from a job's end event to the
// launch of the pending job that was waiting for its CPU (the timer is off,
// so only the event can start it). Reports the median.
func BenchmarkFreedToLaunched(b *testing.B) {
	tc := MustServer(b, eventsOnly, func(c *Config) { c.Logger = log.New(io.Discard, "", 0) })
	node := newFakeNode(tc, "n1", 1, 1<<30)
	node.register()
	running := tc.submit(script("first"))
	node.waitLaunch()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		node.register() // heartbeat: long runs outlast the node timeout
		next := tc.submit(script("next"))
		tc.waitJob(next, "pending", func(j api.Job) bool { return j.Reason == api.ReasonResources })
		t0 := time.Now()
		if err := node.end(running, api.StateCompleted, 0); err != nil {
			b.Fatal(err)
		}
		if l := node.waitLaunch(); l.JobID != next {
			b.Fatalf("launched %d, want %d", l.JobID, next)
		}
		lat = append(lat, time.Since(t0))
		running = next
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
