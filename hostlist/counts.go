package hostlist

import (
	"strconv"
	"strings"
)

// CompressCounts writes per-node counts in Slurm's run-length form, as in
// SLURM_TASKS_PER_NODE and SLURM_JOB_CPUS_PER_NODE: a run of equal values
// is "value(xN)", a single one is the value alone, runs are joined by
// commas: {2, 2, 1} -> "2(x2),1". The counts stay in the given (node)
// order; nil is "".
func CompressCounts(counts []int) string {
	var b strings.Builder
	for i := 0; i < len(counts); {
		j := i
		for j+1 < len(counts) && counts[j+1] == counts[i] {
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(counts[i]))
		if n := j - i + 1; n > 1 {
			b.WriteString("(x" + strconv.Itoa(n) + ")")
		}
		i = j + 1
	}
	return b.String()
}
