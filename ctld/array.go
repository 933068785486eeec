package ctld

import (
	"slices"
	"sort"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/jobspec"
)

// An array job of N tasks reserves N consecutive job IDs at submit: task
// at position k (in index order) has ID base+k, so the array job ID is the
// first task's. Tasks that have not started stay in one remainder record
// (store.ArrayRecord); a task gets a job of its own in the queue
// when it starts or is changed on its own (cancelled, held, updated).
// From then on it is an ordinary job with ArrayJobID and ArrayTaskID set.

// arrayJob is one array job in memory.
type arrayJob struct {
	base       uint64
	ranges     []api.ArrayRange // every task's index (the spec's)
	starts     []int            // starts[i] is the position of ranges[i].First
	count      int
	maxRunning int
	// rem is the pending remainder, nil once every task has a job of its
	// own; remCount is the number of indexes in rem.Pending.
	rem      *store.ArrayRecord
	remCount int
	// live counts the tasks with a job of their own that have not ended.
	live int
}

func newArrayJob(base uint64, a *api.JobArray) *arrayJob {
	aj := &arrayJob{base: base, ranges: a.Ranges, maxRunning: a.MaxRunning}
	for _, r := range a.Ranges {
		aj.starts = append(aj.starts, aj.count)
		aj.count += rangeCount(r)
	}
	return aj
}

func rangeCount(r api.ArrayRange) int {
	if r.Step < 1 || r.Last < r.First {
		return 0
	}
	return (r.Last-r.First)/r.Step + 1
}

func countRanges(rs []api.ArrayRange) int {
	n := 0
	for _, r := range rs {
		n += rangeCount(r)
	}
	return n
}

// idOf is the job ID of the task with this index.
func (a *arrayJob) idOf(index int) (uint64, bool) {
	i := sort.Search(len(a.ranges), func(i int) bool { return a.ranges[i].Last >= index })
	if i == len(a.ranges) {
		return 0, false
	}
	r := a.ranges[i]
	if index < r.First || (index-r.First)%r.Step != 0 {
		return 0, false
	}
	return a.base + uint64(a.starts[i]+(index-r.First)/r.Step), true
}

// indexOf is the index of the task with this job ID.
func (a *arrayJob) indexOf(id uint64) (int, bool) {
	if id < a.base || id >= a.base+uint64(a.count) {
		return 0, false
	}
	pos := int(id - a.base)
	i := sort.Search(len(a.starts), func(i int) bool { return a.starts[i] > pos }) - 1
	return a.ranges[i].First + (pos-a.starts[i])*a.ranges[i].Step, true
}

// pendingIndex reports whether index is still in the remainder.
func (a *arrayJob) pendingIndex(index int) bool {
	if a.rem == nil {
		return false
	}
	for _, r := range a.rem.Pending {
		if index >= r.First && index <= r.Last && (index-r.First)%r.Step == 0 {
			return true
		}
	}
	return false
}

// withoutIndexes returns ranges minus the given indexes, as a new slice.
func withoutIndexes(ranges []api.ArrayRange, drop []int) []api.ArrayRange {
	out := slices.Clone(ranges)
	for _, idx := range drop {
		for i, r := range out {
			if idx < r.First || idx > r.Last || (idx-r.First)%r.Step != 0 {
				continue
			}
			var parts []api.ArrayRange
			if idx > r.First {
				parts = append(parts, api.ArrayRange{First: r.First, Last: idx - r.Step, Step: r.Step})
			}
			if idx < r.Last {
				parts = append(parts, api.ArrayRange{First: idx + r.Step, Last: r.Last, Step: r.Step})
			}
			out = slices.Replace(out, i, i+1, parts...)
			break
		}
	}
	return out
}

// firstIndexes returns up to n pending indexes, lowest first.
func firstIndexes(ranges []api.ArrayRange, n int) []int {
	var out []int
	for _, r := range ranges {
		for i := r.First; r.Step > 0 && i <= r.Last && len(out) < n; i += r.Step {
			out = append(out, i)
		}
	}
	return out
}

// launchArray is the array part of a task's launch request.
func launchArray(base uint64, task int, a *api.JobArray) *api.LaunchArray {
	la := &api.LaunchArray{JobID: base, TaskID: task, TaskCount: countRanges(a.Ranges), TaskStep: 1}
	if len(a.Ranges) > 0 {
		la.TaskMin, la.TaskMax = a.Ranges[0].First, a.Ranges[len(a.Ranges)-1].Last
	}
	if len(a.Ranges) == 1 && a.Ranges[0].Last > a.Ranges[0].First {
		la.TaskStep = a.Ranges[0].Step
	}
	return la
}

// remJob is the job that stands for the array's tasks without a job of
// their own (its remainder's), nil when there is none (or a is nil). It changes only by
// a commit of a remChange (withRemJob, remEnded), or in place for what is
// shown and never persisted (a cycle's priority and reason).
func (a *arrayJob) remJob() *api.Job {
	if a == nil || a.rem == nil {
		return nil
	}
	return &a.rem.Job
}

// pendingRem is remJob while it is pending, nil otherwise.
func (a *arrayJob) pendingRem() *api.Job {
	if j := a.remJob(); j != nil && j.State == api.StatePending {
		return j
	}
	return nil
}

// firstPending is up to n indexes of tasks without a job of their own,
// lowest first.
func (a *arrayJob) firstPending(n int) []int {
	if a.rem == nil {
		return nil
	}
	return firstIndexes(a.rem.Pending, n)
}

// withRemJob is the change that gives a's remainder the job next.
func (a *arrayJob) withRemJob(job api.Job) remChange {
	next := *a.rem
	next.Job = job
	return remChange{a: a, next: &next}
}

// remChange is an array remainder's next record; next nil deletes it.
type remChange struct {
	a    *arrayJob
	next *store.ArrayRecord
}

// remEnded is the change that ends an array's remainder by ev (a
// cancel): every task in it ends, never having run.
func remEnded(a *arrayJob, ev lifecycle.Event, at time.Time) (remChange, error) {
	job, err := lifecycle.Next(a.rem.Job, ev, at)
	if err != nil {
		return remChange{}, err
	}
	return a.withRemJob(job), nil
}

// remView is the listing entry that stands for a remainder's tasks.
func remView(a *arrayJob) api.Job {
	j := a.rem.Job
	if idx := firstIndexes(a.rem.Pending, 1); len(idx) == 1 {
		j.ID, _ = a.idOf(idx[0])
	}
	j.ArrayJobID = a.base
	j.ArrayTasks = jobspec.FormatArray(api.JobArray{Ranges: a.rem.Pending, MaxRunning: a.maxRunning})
	return j
}

// taskView is how a task that has no job of its own yet is shown.
func taskView(a *arrayJob, index int) api.Job {
	j := a.rem.Job
	j.ID, _ = a.idOf(index)
	j.ArrayJobID, j.ArrayTaskID, j.ArrayTasks = a.base, &index, ""
	return j
}
