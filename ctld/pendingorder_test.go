package ctld

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// TestPendingOrder: whatever order jobs come and go in, the walk yields
// exactly the pending ones, in ID order, and compaction keeps it so.
func TestPendingOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var p pendingOrder
	jobs := map[uint64]*job{}
	for step := range 20000 {
		id := uint64(1 + rng.Intn(500))
		j := jobs[id]
		if j == nil {
			j = &job{rec: store.JobRecord{Job: api.Job{ID: id}}}
			jobs[id] = j
		}
		if rng.Intn(3) == 0 {
			j.rec.Job.State = api.StatePending
			p.pending(j)
		} else {
			j.rec.Job.State = api.StateRunning
			p.left(j)
		}
		if step%97 != 0 {
			continue
		}
		var want, got []uint64
		for id, j := range jobs {
			if j.rec.Job.State == api.StatePending {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		for j := range p.each {
			got = append(got, j.rec.Job.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: walk %v, want %v", step, got, want)
		}
		if p.stale > 64 && 2*p.stale > len(p.jobs) {
			t.Fatalf("step %d: %d of %d entries stale: compaction did not run", step, p.stale, len(p.jobs))
		}
	}
}
