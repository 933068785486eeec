package cli

import (
	"strconv"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// expandArrays replaces each listing entry that folds an array's pending
// tasks (123_[4-15]) with one entry per task, as `squeue -r` shows them.
// A task's job ID follows from its position in the array (array.go in
// ctld): the array job ID plus the number of indexes before it.
func expandArrays(jobs []api.Job) []api.Job {
	var out []api.Job
	for _, j := range jobs {
		if j.ArrayTasks == "" || j.Spec.Array == nil {
			out = append(out, j)
			continue
		}
		pending, _, err := jobspec.ParseArray(j.ArrayTasks)
		if err != nil {
			out = append(out, j)
			continue
		}
		positions := make(map[int]uint64)
		for pos, index := range j.Spec.Array.Indexes() {
			positions[index] = uint64(pos)
		}
		for _, index := range pending.Indexes() {
			task := j
			task.ID = j.ArrayJobID + positions[index]
			task.ArrayTasks, task.ArrayTaskID = "", &index
			out = append(out, task)
		}
	}
	return out
}

func refText(id uint64, task *int) string {
	if task != nil {
		return api.TaskRef{JobID: id, Task: *task}.String()
	}
	return strconv.FormatUint(id, 10)
}
