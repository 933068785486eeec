package cli

import (
	"os/user"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// slurmJobRefs reads job IDs as Slurm's commands take them: 123, 123_4
// (one array task) and 123_[1-5,7] (several), in comma lists or apart.
// A step (123.0) is refused here: commands that take steps (scancel)
// split them off first. A range of job
// IDs (1-5) is no Slurm syntax and is refused as Slurm refuses it.
func slurmJobRefs(words []string) (ids []uint64, tasks []api.TaskRef, err error) {
	for _, w := range splitJobWords(words) {
		if strings.Contains(w, ".") {
			return nil, nil, slurmErrorf("Invalid job id %s: job steps (JOB.STEP) are not supported by corral yet", w)
		}
		if head, set, ok := strings.Cut(w, "_["); ok {
			if !strings.HasSuffix(set, "]") {
				return nil, nil, slurmErrorf("Invalid job id %s: an array task set is 123_[1-5]", w)
			}
			id, _, err := api.ParseJobRef(head)
			if err != nil {
				return nil, nil, slurmErrorf("Invalid job id %s", w)
			}
			arr, _, err := jobspec.ParseArray(strings.TrimSuffix(set, "]"))
			if err != nil || arr.MaxRunning != 0 {
				return nil, nil, slurmErrorf("Invalid job id %s: an array task set is 123_[1-5]", w)
			}
			for _, i := range arr.Indexes() {
				tasks = append(tasks, api.TaskRef{JobID: id, Task: i})
			}
			continue
		}
		id, task, err := api.ParseJobRef(w)
		if err != nil {
			return nil, nil, slurmErrorf("Invalid job id %s", w)
		}
		if task != nil {
			tasks = append(tasks, api.TaskRef{JobID: id, Task: *task})
		} else {
			ids = append(ids, id)
		}
	}
	return ids, tasks, nil
}

// splitJobWords splits comma lists outside brackets: "1,2_[3,4]" is 1
// and 2_[3,4].
func splitJobWords(words []string) []string {
	var out []string
	for _, w := range words {
		depth, start := 0, 0
		for i := 0; i <= len(w); i++ {
			switch {
			case i == len(w) || w[i] == ',' && depth == 0:
				if part := strings.TrimSpace(w[start:i]); part != "" {
					out = append(out, part)
				}
				start = i + 1
			case w[i] == '[':
				depth++
			case w[i] == ']':
				depth--
			}
		}
	}
	return out
}

// groupName names a group ID from the local group database ("" when it
// has no name).
func groupName(gid uint32) string {
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10))
	if err != nil {
		return ""
	}
	return g.Name
}
