package sim

import "slices"

// orderPending puts the pending jobs in the planner's order (priority,
// highest first, then submit time, then trace position), so that the
// planner's sort finds its input sorted and checks it in one pass.
// Priorities move little between plans (age grows alike for all; shares
// are recomputed every few minutes), so the jobs are mostly in order
// already: an insertion sort moves the few that are not. Past a budget
// of moves, after a recomputation of shares, a full sort is cheaper.
// Sorting a queue thousands deep at every plan was a fifth of a default
// replay of an overloaded log.
func orderPending(jobs []*simJob) {
	budget := 4*len(jobs) + 64
	for i := 1; i < len(jobs); i++ {
		j := jobs[i]
		k := i
		for k > 0 && plansBefore(j, jobs[k-1]) {
			jobs[k] = jobs[k-1]
			k--
		}
		jobs[k] = j
		if budget -= i - k; budget < 0 {
			slices.SortFunc(jobs, func(a, b *simJob) int {
				switch {
				case plansBefore(a, b):
					return -1
				case plansBefore(b, a):
					return 1
				}
				return 0
			})
			return
		}
	}
}

// plansBefore is the planner's order (sched.SortByPriority): a job's ID
// in the snapshot is its trace position.
func plansBefore(a, b *simJob) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.Submit != b.Submit { // submitted is at(Submit)
		return a.Submit < b.Submit
	}
	return a.pos < b.pos
}
