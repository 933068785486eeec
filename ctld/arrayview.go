package ctld

import (
	"github.com/corral-hpc/corral/api"
)

// How array jobs look in listings: a task with a job of its own is listed
// like any job; the tasks still in a remainder are one entry (remView,
// 123_[4-15]) whose ID is the lowest of theirs. `corral queue -r`
// expands that entry client-side.

// appendArrayViews adds the array entries a listing asks for to
// out: remainders, and tasks named by ID that have no job of their own.
// Jobs listed already are not added again.
func (q *queue) appendArrayViews(out []api.Job, f api.JobFilter, includeFinished bool, match func(*api.Job) bool) []api.Job {
	if len(q.arrays) == 0 {
		return out
	}
	addRem := func(a *arrayJob) {
		if a.rem == nil || a.remCount == 0 || (!includeFinished && a.rem.Job.State.Terminal()) {
			return
		}
		if v := remView(a); match(&v) {
			out = append(out, v)
		}
	}
	if len(f.IDs)+len(f.Tasks) == 0 {
		for _, base := range q.bases {
			addRem(q.arrays[base])
		}
		return out
	}
	for _, id := range f.IDs {
		if a := q.arrays[id]; a != nil {
			for pos := 1; pos < a.count; pos++ { // the first task is the array ID, listed already
				if j := q.jobs[a.base+uint64(pos)]; j != nil && match(&j.rec.Job) {
					out = append(out, j.rec.Job)
				}
			}
			addRem(a)
			continue
		}
		if q.jobs[id] == nil {
			if v, msg := q.view(jobRef{id: id}); msg == "" && match(&v) {
				out = append(out, v)
			}
		}
	}
	for _, t := range f.Tasks {
		task := t.Task
		if v, msg := q.view(jobRef{id: t.JobID, task: &task}); msg == "" && match(&v) {
			out = append(out, v)
		}
	}
	return out
}
