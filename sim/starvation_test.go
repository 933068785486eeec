package sim

import (
	"testing"

	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// starvationTrace is a heavy user's wide job in a stream of small jobs:
// user 1 has held the whole 16-processor machine for 100,000 s when it
// asks for it again (job 2), so far more than the light users will use
// during the test; from 99,000 s until the stream's end four
// light users submit a 1-processor, 300 s job every 17 s between them,
// a tenth more than the machine can run, so small jobs are always
// waiting.
func starvationTrace(t *testing.T, end int64) *Trace {
	lines := []string{"; MaxProcs: 16", line(1, 0, 100000, 16, 100000, 1), line(2, 100000, 1000, 16, 1000, 1)}
	id := int64(3)
	for s := int64(99000); s < end; s += 17 {
		lines = append(lines, line(id, s, 300, 1, 300, 2+id%4))
		id++
	}
	return MustTrace(t, lines...)
}

// The default policy promises: once a job has waited
// sched.DefaultReserveOldestAfter and is among the
// sched.DefaultReserveOldest jobs that have waited longest, it holds a
// reservation no later job can delay, so once it is also the oldest it
// starts no later than the longest time limit of the jobs then running,
// 300 s here. The old default (conservative backfill, the same priorities)
// puts every light user's newer job ahead of the heavy user's, so job 2
// waits for the whole stream, 50,000 s.
func TestHeavyUsersWideJobStartsWithinTheOldestBound(t *testing.T) {
	tr := starvationTrace(t, 150000)
	oldDefault := setup{planner: sched.Backfill{Mode: sched.Conservative, StartsOnly: true},
		priority: priority.DefaultConfig(), predict: true}
	old, err := runWith(tr, Config{Policy: "old default"}, oldDefault)
	if err != nil {
		t.Fatal(err)
	}
	res := MustRun(t, tr, Config{Policy: PolicyDefault})
	for _, r := range []*Result{old, res} {
		wide, oldest := guardBound(r)
		oldest = max(oldest, wide.Submit+int64(sched.DefaultReserveOldestAfter.Seconds()))
		bound := oldest + 300
		t.Logf("%s: job 2 starts at %d (bound %d)", r.Policy, wide.Start, bound)
		if r.Policy == PolicyDefault && wide.Start > bound {
			t.Fatalf("default: job 2 was the oldest and reserved at %d but started at %d, past the bound %d",
				oldest, wide.Start, bound)
		}
		if r.Policy != PolicyDefault && wide.Start <= bound {
			t.Fatalf("the old default started job 2 at %d, within %d: the workload no longer shows its starvation",
				wide.Start, bound)
		}
	}
}

// guardBound finds job 2 and the moment it became the oldest pending
// job: its submit time, or the last start of a job submitted before it.
func guardBound(r *Result) (Record, int64) {
	var wide Record
	for _, rec := range r.Records {
		if rec.ID == 2 {
			wide = rec
		}
	}
	oldest := wide.Submit
	for _, rec := range r.Records {
		if rec.Submit < wide.Submit && rec.Start > oldest {
			oldest = rec.Start
		}
	}
	return wide, oldest
}
