package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// loadJobs is the queue size of the load benchmarks (issue 7: "100,000
// jobs in the queue").
const loadJobs = 100_000

// fillQueue submits n pending jobs (no nodes: they stay queued) through
// the API from 32 clients. Each is what `corral submit` sends for a small
// batch script, so records are of realistic size.
func fillQueue(b *testing.B, c *Cluster, n int) {
	b.Helper()
	spec := api.JobSpec{Name: "load", CPUs: 1, MemBytes: 1 << 30, WorkDir: "/tmp", TimeLimit: 3600,
		Script: "#!/bin/sh\n#SBATCH --time=1:00:00\n#SBATCH --mem=1G\nsrun ./simulate --steps 1000 input.dat\n"}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var once sync.Once
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewClient(c.Socket)
			for i := range next {
				s := spec
				s.Name = "load-" + strconv.Itoa(i)
				if _, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: s}); err != nil {
					once.Do(func() { b.Error(err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// vmRSS is a process's resident memory in bytes (VmRSS in /proc).
func vmRSS(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}

// BenchmarkLoad100k: a controller with 100,000 pending jobs. Sub-benchmarks:
//   - rss: ctld's resident memory after the submits and after a restart
//     (MB-resident, MB-resident-restarted).
//   - queue-table, queue-json: one real `corral queue` process listing
//     them all, from exec to exit (ns/op), and ctld's resident memory
//     after the listings (MB-resident-after).
//   - restart: kill -9 and start of a real corral-ctld until it answers,
//     the state file loaded and verified (ms/op).
//
// Targets (issue 7): under 500 MB, under 1 s, under 3 s. Figures in
// docs/benchmarks.md ("Load"); nothing here asserts a speed.
func BenchmarkLoad100k(b *testing.B) {
	c := StartCluster(b, ClusterOpts{NoNodes: true})
	t0 := time.Now()
	fillQueue(b, c, loadJobs)
	b.Logf("%d jobs submitted in %s", loadJobs, time.Since(t0).Round(time.Millisecond))
	b.Run("rss", func(b *testing.B) {
		for range b.N {
			b.ReportMetric(float64(vmRSS(b, c.ctld.Process.Pid))/1e6, "MB-resident")
		}
	})
	for _, mode := range []struct{ name, flag string }{{"queue-table", ""}, {"queue-json", "--json"}} {
		b.Run(mode.name, func(b *testing.B) {
			args := []string{"queue"}
			if mode.flag != "" {
				args = append(args, mode.flag)
			}
			// A row of the table; an element of the indented JSON array.
			per := "\n" + strconv.Itoa(loadJobs) + " "
			count := func(out string) int { return strings.Count(out, " load-") }
			if mode.flag != "" {
				per = "\n  {"
				count = func(out string) int { return strings.Count(out, per) }
			}
			for range b.N {
				r := runCorral(c.t, c.Socket, "", args...)
				if r.Code != 0 || count(r.Stdout) != loadJobs || !strings.Contains(r.Stdout, per) {
					b.Fatalf("corral %v: exit %d, %d jobs listed: %s", args, r.Code, count(r.Stdout), r.Stderr)
				}
			}
			b.ReportMetric(float64(vmRSS(b, c.ctld.Process.Pid))/1e6, "MB-resident-after")
		})
	}
	b.Run("restart", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			c.KillCtld()
			b.StartTimer()
			c.StartCtld() // returns once ctld answers a ping
		}
		b.StopTimer()
		b.ReportMetric(float64(vmRSS(b, c.ctld.Process.Pid))/1e6, "MB-resident-restarted")
		jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{})
		if err != nil || len(jobs) != loadJobs {
			b.Fatalf("after restart: %d jobs, %v", len(jobs), err)
		}
	})
}
