//go:build !slurmonly

package cli

import (
	"sort"
	"strconv"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// startTimeLayout is how squeue --start prints times: local, no zone.
const startTimeLayout = "2006-01-02T15:04:05"

// queueStart is `corral queue --start`: the pending jobs among jobs with
// the planner's expected start and nodes, soonest first, as squeue
// --start shows them. A job the planner cannot place in time (one
// waiting behind jobs without a time limit, a held job) shows N/A.
func queueStart(c *ucli.Context, jobs []api.Job) error {
	pending := make([]api.Job, 0, len(jobs))
	for _, j := range jobs {
		if j.State == api.StatePending {
			pending = append(pending, j)
		}
	}
	sort.SliceStable(pending, func(a, b int) bool {
		x, y := pending[a].PlannedStart, pending[b].PlannedStart
		switch {
		case x == nil || y == nil:
			return x != nil && y == nil // planned before unknown
		case !x.Equal(*y):
			return x.Before(*y)
		}
		return pending[a].Priority > pending[b].Priority
	})
	if c.Bool("json") {
		return writeJSON(out(c), pending)
	}
	rows := make([][]string, 0, len(pending))
	for i := range pending {
		rows = append(rows, startRow(&pending[i]))
	}
	return writeTable(out(c), []string{"JOBID", "PARTITION", "NAME", "USER", "ST", "START_TIME", "NODES", "SCHEDNODES", "NODELIST(REASON)"}, rows)
}

func startRow(j *api.Job) []string {
	start, sched := "N/A", "(null)"
	if j.PlannedStart != nil {
		start = j.PlannedStart.Local().Format(startTimeLayout)
	}
	if len(j.PlannedNodes) > 0 {
		sched = hostlist.Compress(j.PlannedNodes)
	}
	return []string{api.JobRefText(j), j.Partition, j.Name, j.User, j.DisplayState(), start,
		strconv.Itoa(max(j.NodeCount, 1)), sched, "(" + reasonText(j.Reason) + ")"}
}
