package ctld

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// scrape returns the metrics page's samples by series name with labels.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " ")
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.MetricsListen = "127.0.0.1:0" })
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	spec := script("m")
	spec.CPUs, spec.MemBytes = 2, 1<<30
	id := tc.submit(spec)
	node.waitLaunch()
	tc.waitJob(id, "running", inState(api.StateRunning))
	tc.submit(func() api.JobSpec { s := script("big"); s.CPUs = 4; return s }()) // waits for CPUs
	m := scrape(t, tc.srv.MetricsAddr())
	for series, want := range map[string]float64{
		`corral_jobs{partition="batch",state="running"}`:                    1,
		`corral_jobs{partition="batch",state="pending"}`:                    1,
		`corral_partition_cpus{kind="allocated",partition="batch"}`:         2,
		`corral_partition_cpus{kind="total",partition="batch"}`:             4,
		`corral_partition_memory_bytes{kind="allocated",partition="batch"}`: 1 << 30,
		`corral_nodes{state="mixed"}`:                                       1,
		`corral_nodes{state="down"}`:                                        0,
		`corral_nodes{state="drained"}`:                                     0,
		`corral_submits_total`:                                              2,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if m["corral_scheduling_cycle_seconds_count"] < 1 {
		t.Error("no scheduling cycle observed")
	}
	if !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(tc.srv.MetricsAddr()) {
		t.Errorf("metrics address %q", tc.srv.MetricsAddr())
	}
}
