package ctld

import (
	"fmt"

	"github.com/corral-hpc/corral/api"
)

// How array jobs look in listings: a task with a job of its own is listed
// like any job; the tasks still in a remainder are one entry (remView,
// 123_[4-15]) whose ID is the lowest of theirs. `corral queue -r`
// expands that entry client-side.

// appendArrayViewsLocked adds the array entries a listing asks for to
// out: remainders, and tasks named by ID that have no job of their own.
// Jobs listed already are not added again.
func (s *Server) appendArrayViewsLocked(out []api.Job, f api.JobFilter, includeFinished bool, match func(*api.Job) bool) []api.Job {
	if len(s.pipe.arrays) == 0 {
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
		for _, base := range s.pipe.bases {
			addRem(s.pipe.arrays[base])
		}
		return out
	}
	for _, id := range f.IDs {
		if a := s.pipe.arrays[id]; a != nil {
			for pos := 1; pos < a.count; pos++ { // the first task is the array ID, listed already
				if j := s.jobs[a.base+uint64(pos)]; j != nil && match(&j.rec.Job) {
					out = append(out, j.rec.Job)
				}
			}
			addRem(a)
			continue
		}
		if s.jobs[id] == nil {
			if v, msg := s.jobViewLocked(jobRef{id: id}); msg == "" && match(&v) {
				out = append(out, v)
			}
		}
	}
	for _, t := range f.Tasks {
		task := t.Task
		if v, msg := s.jobViewLocked(jobRef{id: t.JobID, task: &task}); msg == "" && match(&v) {
			out = append(out, v)
		}
	}
	return out
}

// jobViewLocked is the job a reference names: a job, or a task that has
// no job of its own yet as it would run. msg says why there is none.
func (s *Server) jobViewLocked(ref jobRef) (api.Job, string) {
	id, task := ref.id, ref.task
	if task == nil {
		if j := s.jobs[id]; j != nil {
			return j.rec.Job, ""
		}
		a := s.arrayOfLocked(id)
		if a == nil {
			return api.Job{}, fmt.Sprintf("job %d does not exist", id)
		}
		index, _ := a.indexOf(id)
		id, task = a.base, &index
	}
	a := s.pipe.arrays[id]
	if a == nil {
		if s.jobs[id] != nil {
			return api.Job{}, fmt.Sprintf("job %d is not an array job", id)
		}
		return api.Job{}, fmt.Sprintf("job %d does not exist", id)
	}
	tid, ok := a.idOf(*task)
	if !ok {
		return api.Job{}, fmt.Sprintf("array job %d has no task %d", id, *task)
	}
	if j := s.jobs[tid]; j != nil {
		return j.rec.Job, ""
	}
	if a.pendingIndex(*task) {
		return taskView(a, *task), ""
	}
	return api.Job{}, fmt.Sprintf("job %s is no longer in the history", describeRef(id, task))
}
