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

// A conservative or EASY replay that plans a prefix of its queue where
// it may must start every job when a replay planning the whole queue
// does, on overloaded traces whose queues grow thousands deep (with ties
// in submit time), and must have planned shorter queues.
func TestPrefixPlansStartWhatWholeQueuesStart(t *testing.T) {
	for _, policy := range []Policy{PolicyConservative, PolicyEASY} {
		for seed := uint64(1); seed <= 3; seed++ {
			prefixPlansMatch(t, policy, seed)
		}
	}
}

// prefixPlansMatch replays policy on an overloaded synthetic trace both
// ways; seed 2's submit times are rounded to 10 minutes, for ties.
func prefixPlansMatch(t *testing.T, policy Policy, seed uint64) {
	t.Helper()
	tr := synthTrace(3000, 64, 2, seed)
	if seed == 2 {
		for i := range tr.Jobs {
			tr.Jobs[i].Submit -= tr.Jobs[i].Submit % 600
		}
	}
	var cutJobs, wholeJobs int
	pol, err := policyFor(policy)
	if err != nil {
		t.Fatal(err)
	}
	whole := pol
	whole.wholeQueue = true
	pol.planner = queueCounter{pol.planner, &cutJobs}
	whole.planner = queueCounter{whole.planner, &wholeJobs}
	sameReplays(t, fmt.Sprintf("%s, seed %d, prefixes against whole queues", policy, seed), tr, pol, whole)
	if cutJobs >= wholeJobs {
		t.Fatalf("%s, seed %d: plans were given %d queued jobs in all, whole queues %d: few or no prefixes", policy, seed, cutJobs, wholeJobs)
	}
}
