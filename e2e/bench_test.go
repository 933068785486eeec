package e2e

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Benchmarks of the whole system. Figures and commands are recorded in
// docs/benchmarks.md; nothing here asserts a speed.

// BenchmarkSubmitCLI: sequential `corral submit` processes, as a pipeline
// that scripts the CLI would run them. Reports the median per submit.
func BenchmarkSubmitCLI(b *testing.B) {
	c := StartCluster(b, ClusterOpts{NoNodes: true})
	dir := b.TempDir()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r := runCorral(c.t, c.Socket, dir, "submit", "--parsable", "-t", "1", "--wrap", "true")
		_ = r
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(lat).Microseconds())/1000, "ms/submit(median)")
}

// BenchmarkSubmitThroughput: durable submits through the API from 32
// concurrent clients. Reports jobs/s.
func BenchmarkSubmitThroughput(b *testing.B) {
	c := StartCluster(b, ClusterOpts{NoNodes: true})
	dir := b.TempDir()
	const clients = 32
	spec := api.JobSpec{Name: "bench", Script: "#!/bin/sh\ntrue\n", CPUs: 1, WorkDir: dir, TimeLimit: 60}
	var wg sync.WaitGroup
	next := make(chan struct{}, b.N)
	for i := 0; i < b.N; i++ {
		next <- struct{}{}
	}
	close(next)
	b.ResetTimer()
	t0 := time.Now()
	var errOnce sync.Once
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewClient(c.Socket)
			for range next {
				if _, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: spec}); err != nil {
					errOnce.Do(func() { b.Error(err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "jobs/s")
}

// BenchmarkEndToEnd: jobs running `true` with 1 CPU each on a 2-CPU node,
// from the first submit to the last completion recorded. Reports jobs/s.
func BenchmarkEndToEnd(b *testing.B) {
	c := StartCluster(b, ClusterOpts{})
	dir := jobDir(b)
	cl := c.Client
	spec := api.JobSpec{Name: "e2e", Script: "#!/bin/sh\ntrue\n", CPUs: 1, MemBytes: 64 << 20,
		WorkDir: dir, TimeLimit: 60, Output: "/dev/null"}
	b.ResetTimer()
	t0 := time.Now()
	ids := make([]uint64, 0, b.N)
	for i := 0; i < b.N; i++ {
		id, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: spec})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	var last time.Time
	for _, id := range ids {
		j := c.WaitEnded(id, 10*time.Minute)
		if j.State != api.StateCompleted {
			b.Fatalf("job %d ended %s: %s", id, j.State, j.Message)
		}
		if j.EndTime.After(last) {
			last = *j.EndTime
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/last.Sub(t0).Seconds(), "jobs/s")
}

// BenchmarkPendingToRunning: a 1-CPU node, a short job running and the next
// one pending; the time from the first job's end (as recorded) to the
// second's start. Reports the median and p90.
func BenchmarkPendingToRunning(b *testing.B) {
	pendingToRunning(b, []NodeOpts{{Name: "n1", CPUs: 1, Mem: "1G"}})
}

// BenchmarkPendingToRunningTwoNodes: the same over two whole nodes. The
// next job starts once the first's part on its second node has stopped
// (COMPLETING, docs/steps.md): the time from the first job's end to the
// second's start is that part's teardown and one scheduling cycle.
func BenchmarkPendingToRunningTwoNodes(b *testing.B) {
	pendingToRunning(b, []NodeOpts{{Name: "n1", CPUs: 1, Mem: "1G"}, {Name: "n2", CPUs: 1, Mem: "1G"}})
}

// pendingToRunning times, over nodes of 1 CPU each, the handover from a
// short job on all of them to the next job queued behind it.
func pendingToRunning(b *testing.B, nodes []NodeOpts) {
	c := StartCluster(b, ClusterOpts{Nodes: nodes})
	dir := jobDir(b)
	short := api.JobSpec{Name: "first", Script: "#!/bin/sh\nsleep 0.3\n", Nodes: len(nodes), CPUs: 1, MemBytes: 64 << 20, WorkDir: dir, TimeLimit: 60, Output: "/dev/null"}
	next := short
	next.Name, next.Script = "next", "#!/bin/sh\ntrue\n"
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, err := c.Client.Submit(context.Background(), api.SubmitRequest{Spec: short})
		if err != nil {
			b.Fatal(err)
		}
		n, err := c.Client.Submit(context.Background(), api.SubmitRequest{Spec: next})
		if err != nil {
			b.Fatal(err)
		}
		ja := c.WaitEnded(a, time.Minute)
		jn := c.WaitEnded(n, time.Minute)
		if ja.State != api.StateCompleted || jn.State != api.StateCompleted {
			b.Fatalf("jobs %d and %d: %s and %s (%q)", a, n, ja.State, jn.State, jn.Message)
		}
		lat = append(lat, jn.StartTime.Sub(*ja.EndTime))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(median(lat).Microseconds())/1000, "ms(p50)")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms(p90)")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
