package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used (user and system): on a
// shared machine it says what a replay costs better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplay replays both shared traces under every policy and
// reports the scheduling metrics next to the time a replay takes. Run:
//
//	go test ./sim -run '^$' -bench BenchmarkReplay -benchtime 1x
func BenchmarkReplay(b *testing.B) {
	for _, name := range []string{"KTH-SP2-filtered.swf", "lublin-256.swf"} {
		path := filepath.Join("..", "..", "shared", "traces", name)
		f, err := os.Open(path)
		if err != nil {
			b.Logf("trace %s not found (../shared/traces from the repository root): %v", name, err)
			continue
		}
		tr, err := ParseSWF(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range Policies {
			b.Run(fmt.Sprintf("trace=%s/policy=%s", name, p), func(b *testing.B) {
				var m Metrics
				for i := 0; i < b.N; i++ {
					res, err := Run(tr, Config{Policy: p})
					if err != nil {
						b.Fatal(err)
					}
					m = res.Metrics
				}
				b.ReportMetric(m.MeanBSLD, "bsld")
				b.ReportMetric(m.MeanWait, "wait_s")
				b.ReportMetric(m.Utilization, "util")
				b.ReportMetric(m.Fairness, "jain")
			})
		}
	}
}

// BenchmarkReplay100k replays a synthetic 100,000-job trace (synthTrace:
// 256 processors, offered load 0.85) under every policy; issue 15 asks for
// under 30 s each. The EASY reference for unfair starts is replayed once,
// outside the timing. Run:
//
//	go test ./sim -run '^$' -bench BenchmarkReplay100k -benchtime 1x
func BenchmarkReplay100k(b *testing.B) {
	tr := synthTrace(100_000, 256, 0.85, 1)
	ref, err := Run(tr, Config{Policy: ReferencePolicy})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range Policies {
		b.Run("policy="+string(p), func(b *testing.B) {
			var m Metrics
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				res, err := Run(tr, Config{Policy: p, Reference: ref.Records})
				if err != nil {
					b.Fatal(err)
				}
				m = res.Metrics
			}
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu_s/op")
			b.ReportMetric(m.MeanBSLD, "bsld")
			b.ReportMetric(m.MeanWait, "wait_s")
			b.ReportMetric(m.Utilization, "util")
		})
	}
}

// BenchmarkReplaySWF replays the first 100,000 jobs of the SWF file named by
// CORRAL_BENCH_SWF (an archive log too big to ship, e.g. CEA-Curie) under
// the policy named by CORRAL_BENCH_POLICY (default: every policy), with the
// EASY reference for unfair starts replayed once, outside the timing. Run:
//
//	CORRAL_BENCH_SWF=/path/to/log.swf go test ./sim -run '^$' -bench BenchmarkReplaySWF -benchtime 1x
func BenchmarkReplaySWF(b *testing.B) {
	path := os.Getenv("CORRAL_BENCH_SWF")
	if path == "" {
		b.Skip("CORRAL_BENCH_SWF is unset: set it to an SWF file to replay")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := ParseSWF(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	const maxJobs = 100_000
	ref, err := Run(tr, Config{Policy: ReferencePolicy, MaxJobs: maxJobs})
	if err != nil {
		b.Fatal(err)
	}
	policies := Policies
	if p := os.Getenv("CORRAL_BENCH_POLICY"); p != "" {
		pol, err := ParsePolicy(p)
		if err != nil {
			b.Fatal(err)
		}
		policies = []Policy{pol}
	}
	for _, p := range policies {
		b.Run("policy="+string(p), func(b *testing.B) {
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := Run(tr, Config{Policy: p, Reference: ref.Records, MaxJobs: maxJobs}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu_s/op")
		})
	}
}
