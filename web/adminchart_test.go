package web

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The chart draws each resource's share of the cluster from the left
// edge (oldest) to the right (newest), 0% at the bottom axis and 100% at
// the top, and says when there is nothing to draw.
func TestAllocChart(t *testing.T) {
	if c := allocChart(nil); !c.Empty || len(c.Series) != 0 {
		t.Fatalf("no samples: %+v", c)
	}
	t0 := time.Unix(1_700_000_000, 0)
	c := allocChart([]api.AllocSample{
		{Time: t0, CPUs: 4, MemBytes: 8 << 30, FGPUHundredths: 200},
		{Time: t0.Add(time.Hour), AllocCPUs: 4, CPUs: 4, AllocMemBytes: 4 << 30, MemBytes: 8 << 30, AllocFGPUHundredths: 300, FGPUHundredths: 200},
	})
	want := map[string]string{"cpu": "30.0,130.0 600.0,0.0", "mem": "30.0,130.0 600.0,65.0", "fgpu": "30.0,130.0 600.0,0.0"} // over 100% is drawn at 100%
	if len(c.Series) != 3 {
		t.Fatalf("series: %+v", c.Series)
	}
	for _, s := range c.Series {
		if s.Points != want[s.Class] {
			t.Errorf("%s: points %q, want %q", s.Class, s.Points, want[s.Class])
		}
	}
	if c.Series[1].Now != "4.0 GiB of 8.0 GiB" || c.Series[2].Now != "3.00 of 2.00" {
		t.Errorf("latest figures: %q, %q", c.Series[1].Now, c.Series[2].Now)
	}
	one := allocChart([]api.AllocSample{{Time: t0, AllocCPUs: 1, CPUs: 2}})
	if p := one.Series[0].Points; !strings.HasPrefix(p, "600.0,65.0 ") || strings.Count(p, ",") != 2 {
		t.Errorf("one sample is drawn as %q, want a flat line at 50%%", p)
	}
}
