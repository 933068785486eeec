package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

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
