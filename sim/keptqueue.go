package sim

import (
	"slices"

	"github.com/corral-hpc/corral/sched"
)

// Under FCFS priority, with no group limit or fair start (fixedJobs), the
// replay keeps its snapshot's queue between plans: arrivals are appended
// and started jobs removed from pending and the snapshot together, so a
// plan does not rebuild thousands of entries from scattered job records.

// startIndexes is where the started jobs are in pending, ascending. The
// index by trace position is only built for plans whose snapshot was
// built whole (kept false); a kept snapshot is searched up to the last
// start, which a plan finds among the first jobs of a long queue.
func (r *replay) startIndexes(starts []sched.Start, kept bool) []int {
	idx := r.startIdx[:0]
	if !kept {
		for _, st := range starts {
			idx = append(idx, r.index[st.JobID])
		}
	} else {
		want := make(map[uint64]bool, len(starts))
		for _, st := range starts {
			want[st.JobID] = true
		}
		for i := 0; len(idx) < len(starts); i++ {
			if want[r.snap.Pending[i].ID] {
				idx = append(idx, i)
			}
		}
	}
	slices.Sort(idx)
	r.startIdx = idx
	return idx
}

// dropAt removes the entries at idx (ascending) from list, keeping the
// order of the rest; only the part after the first moves.
func dropAt[T any](list []T, idx []int) []T {
	if len(idx) == 0 {
		return list
	}
	out, next := idx[0], 0
	for i := idx[0]; i < len(list); i++ {
		if next < len(idx) && idx[next] == i {
			next++
			continue
		}
		list[out] = list[i]
		out++
	}
	clear(list[out:])
	return list[:out]
}
