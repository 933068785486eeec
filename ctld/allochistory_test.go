package ctld

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The allocation history keeps the newest samples, oldest first, and
// never more than its capacity however long it runs.
func TestAllocHistoryRingBounded(t *testing.T) {
	h := newAllocHistory(time.Minute, 5)
	if got := h.history(); got.EveryS != 60 || got.Samples == nil || len(got.Samples) != 0 {
		t.Fatalf("an empty history: %+v", got)
	}
	base := time.Unix(1_700_000_000, 0)
	for i := range 3 {
		h.add(api.AllocSample{Time: base.Add(time.Duration(i) * time.Minute), AllocCPUs: i})
	}
	if got := h.history().Samples; len(got) != 3 || got[0].AllocCPUs != 0 || got[2].AllocCPUs != 2 {
		t.Fatalf("three samples: %+v", got)
	}
	for i := 3; i < 1000; i++ {
		h.add(api.AllocSample{Time: base.Add(time.Duration(i) * time.Minute), AllocCPUs: i})
		if n := len(h.history().Samples); n != min(i+1, 5) {
			t.Fatalf("after %d samples the history holds %d, want %d", i+1, n, min(i+1, 5))
		}
	}
	got := h.history().Samples
	for i, s := range got {
		if s.AllocCPUs != 995+i {
			t.Fatalf("after 1000 samples: %+v, want the newest five, oldest first", got)
		}
	}
}

// The controller samples its own allocation (what `corral nodes` shows,
// summed) and serves the samples to administrators only.
func TestAllocHistorySampling(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.AllocSampleEvery = 5 * time.Millisecond })
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	spec := script("busy")
	spec.CPUs, spec.MemBytes = 3, 1<<30
	tc.submitFor(uidOwner, spec)
	node.waitLaunch()
	var h api.AllocHistory
	waitFor(t, "a sample of the running job", func() bool {
		code, body := callAs(t, tc, uidAdmin, http.MethodGet, "/v1/admin/allocation", nil)
		if code != 200 || json.Unmarshal(body, &h) != nil {
			t.Fatalf("GET /v1/admin/allocation as an admin: %d %s", code, body)
		}
		n := len(h.Samples)
		return n > 0 && h.Samples[n-1].AllocCPUs == 3
	})
	last := h.Samples[len(h.Samples)-1]
	if last.CPUs != 4 || last.MemBytes != 8<<30 || last.AllocMemBytes != 1<<30 || h.EveryS != 0 {
		t.Errorf("the last sample %+v (every %d s), want 3 of 4 CPUs and 1 of 8 GiB", last, h.EveryS)
	}
	for i := 1; i < len(h.Samples); i++ {
		if h.Samples[i].Time.Before(h.Samples[i-1].Time) {
			t.Fatalf("samples out of order at %d", i)
		}
	}
	if code, body := callAs(t, tc, nobody, http.MethodGet, "/v1/admin/allocation", nil); code != http.StatusForbidden {
		t.Errorf("a user's GET /v1/admin/allocation: %d %s, want 403", code, body)
	}
}
