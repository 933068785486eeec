package ctld

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
	"github.com/corral-hpc/corral/ctld/store"
)

// TestStateIndexPage drives the queue's track path with random submits,
// starts, suspends, ends, cancels, requeues, owner changes and history
// purges, each a fresh record as a commit installs it, and checks that a
// page read from the stateIndex (counts and newest rows of each state) is
// the page a walk of every record gives, for an owner and for a caller
// who sees all, with and without finished jobs.
func TestStateIndexPage(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	q := newQueue()
	var mu lockorder.RWMutex[lockorder.Server]
	states := []api.JobState{api.StatePending, api.StatePending, api.StateRunning, api.StateSuspended,
		api.StateCompleted, api.StateCancelled, api.StateFailed, api.StateTimeout}
	filters := []api.JobFilter{{All: true}, {}, {States: []api.JobState{api.StatePending}},
		{States: []api.JobState{api.StateCompleted, api.StateRunning}}}
	next := uint64(1)
	for step := range 30000 {
		var id uint64
		switch r := rng.Intn(10); {
		case r < 3: // a submit
			id, next = next, next+1+uint64(rng.Intn(2))
		case r == 3 && next > 1: // the history's purge of a finished job
			if j := q.job(uint64(1 + rng.Intn(int(next-1)))); j != nil && j.rec.Job.State.Terminal() {
				q.drop(j.rec.Job.ID)
			}
			continue
		case next > 1:
			id = uint64(1 + rng.Intn(int(next-1)))
		default:
			continue
		}
		rec := store.JobRecord{Job: api.Job{ID: id, UID: uint32(1000 + rng.Intn(3)), State: states[rng.Intn(len(states))]}}
		j := q.job(id)
		if j == nil {
			j = &job{}
		} else if rng.Intn(5) != 0 {
			rec.Job.UID = j.rec.Job.UID // most changes keep the owner
		}
		j.rec = rec
		q.track(j)
		if step%97 != 0 {
			continue
		}
		for _, f := range filters {
			for _, all := range []bool{false, true} {
				uid, limit := uint32(1000+rng.Intn(3)), 1+rng.Intn(6)
				match, includeFinished := jobMatcher(f)
				walk := &listing{mu: &mu, match: match, visible: func(j *api.Job) bool { return all || j.UID == uid },
					plan: func(yield func(*api.Job)) []api.Job { return q.list(f, match, includeFinished, yield) }}
				want := walk.page(limit)
				indexed := *walk
				indexed.byState = &statePage{q: q, uid: uid, everyone: all, state: stateShown(f, includeFinished),
					views: func() []api.Job { return nil }}
				got := indexed.page(limit)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d, filter %+v, uid %d (all %v), limit %d:\nindexed %v %v\nwalk    %v %v", step, f, uid, all, limit,
						got.Counts, pageIDs(got), want.Counts, pageIDs(want))
				}
			}
		}
		for k, l := range q.byState.lists {
			if l.stale > 64 && 2*l.stale > len(l.jobs) {
				t.Fatalf("step %d: list %+v has %d of %d entries stale: compaction did not run", step, k, l.stale, len(l.jobs))
			}
		}
	}
}

func pageIDs(p api.JobPage) []uint64 {
	var out []uint64
	for _, j := range p.Jobs {
		out = append(out, j.ID)
	}
	return slices.Clip(out)
}
