package cli

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestUsageBars(t *testing.T) {
	u := &api.Usage{
		Partitions: []api.PartitionUsage{{Partition: "batch",
			Allocated: api.UsageAmounts{CPUs: 1, MemBytes: 1 << 30, FGPU: 50},
			Total:     api.UsageAmounts{CPUs: 4, MemBytes: 4 << 30, FGPU: 200}}},
		Users: []api.UserUsage{{User: "alice", RunningJobs: 1, PendingJobs: 2,
			Allocated: api.UsageAmounts{CPUs: 2, MemBytes: 1 << 30},
			Allowed:   api.UsageAmounts{CPUs: 2}}},
	}
	var b strings.Builder
	if err := writeUsage(&b, u); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"partition batch",
		"  cpu    [#####...............] 1/4 total",
		"  mem    [#####...............] 1.0G/4.0G total",
		"  fgpu   [#####...............] 0.5/2 total",
		"user alice (1 running, 2 pending)",
		"  cpu    [####################] 2/2 allowed",
		"  mem                           1.0G (no limit)",
		"  fgpu                          0 (no limit)",
	}
	if got := strings.Split(strings.TrimRight(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		used, of int64
		want     string
	}{{0, 10, "[....................]"}, {1, 1000, "[#...................]"}, {30, 10, "[####################]"}} {
		if got := bar(c.used, c.of); got != c.want {
			t.Errorf("bar(%d, %d) = %s, want %s", c.used, c.of, got, c.want)
		}
	}
	for h, want := range map[int64]string{0: "0", 50: "0.5", 125: "1.25", 300: "3"} {
		if got := formatFGPU(h); got != want {
			t.Errorf("formatFGPU(%d) = %q, want %q", h, got, want)
		}
	}
}
