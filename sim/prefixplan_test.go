package sim

import (
	"fmt"
	"testing"

	"github.com/corral-hpc/corral/sched"
)

// queueCounter passes plans through, adding up the queues it was given.
type queueCounter struct {
	sched.Planner
	jobs *int
}

func (q queueCounter) Plan(s sched.Snapshot) sched.Plan {
	*q.jobs += len(s.Pending)
	return q.Planner.Plan(s)
}

// A conservative replay that plans a prefix of its queue where it may
// must start every job when a replay planning the whole queue does, on
// overloaded traces whose queues grow thousands deep (with ties in
// submit time), and must have planned shorter queues.
func TestPrefixPlansStartWhatWholeQueuesStart(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		tr := synthTrace(3000, 64, 2, seed)
		if seed == 2 {
			for i := range tr.Jobs {
				tr.Jobs[i].Submit -= tr.Jobs[i].Submit % 600
			}
		}
		var cutJobs, wholeJobs int
		pol, err := policyFor(PolicyConservative)
		if err != nil {
			t.Fatal(err)
		}
		whole := pol
		whole.wholeQueue = true
		pol.planner = queueCounter{pol.planner, &cutJobs}
		whole.planner = queueCounter{whole.planner, &wholeJobs}
		sameReplays(t, fmt.Sprintf("seed %d, prefixes against whole queues", seed), tr, pol, whole)
		if cutJobs >= wholeJobs {
			t.Fatalf("seed %d: plans were given %d queued jobs in all, whole queues %d: few or no prefixes", seed, cutJobs, wholeJobs)
		}
	}
}
