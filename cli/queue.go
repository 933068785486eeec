//go:build !slurmonly

package cli

import (
	"sort"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

func queueCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "queue",
		Usage:     "list pending and running jobs (like squeue)",
		UsageText: "corral queue [-u USER] [--me] [-t STATES] [-j IDS] [-r] [--start] [--json]",
		Flags: []ucli.Flag{
			&ucli.StringSliceFlag{Name: "user", Aliases: []string{"u"}, Usage: "only jobs of these users (repeatable, comma list)"},
			&ucli.BoolFlag{Name: "me", Usage: "only my jobs"},
			&ucli.StringSliceFlag{Name: "states", Aliases: []string{"t", "state"}, Usage: "only jobs in these states: names or short codes (PD,R,CD,...), CG (completing) or all"},
			&ucli.StringSliceFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "only these job IDs (comma list; 123_4 is one array task)"},
			&ucli.BoolFlag{Name: "array", Aliases: []string{"r"}, Usage: "one line per array task instead of 123_[4-15] for an array's pending tasks"},
			&ucli.BoolFlag{Name: "start", Usage: "pending jobs only, with their planned START_TIME and SCHEDNODES (like squeue --start)"},
			&ucli.BoolFlag{Name: "json", Usage: "print a JSON array of jobs (every field but spec and history; corral show job --json has all)"},
			socketFlag(),
		},
		Action: queue,
	}
}

func queue(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	f, err := jobFilter(c)
	if err != nil {
		return err
	}
	if !c.Bool("array") && !c.Bool("start") {
		return queuePlain(c, f) // queuefast.go
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	jobs, err := client(c, "").Jobs(ctx, f)
	if err != nil {
		return err
	}
	if jobs == nil {
		jobs = []api.Job{}
	}
	if c.Bool("array") {
		jobs = expandArrays(jobs) // jobref.go
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	if c.Bool("start") {
		return queueStart(c, jobs) // queuestart.go
	}
	if c.Bool("json") {
		return writeJSON(out(c), jobs)
	}
	now := time.Now()
	rows := make([][]string, 0, len(jobs))
	for i := range jobs {
		rows = append(rows, queueRow(&jobs[i], now))
	}
	header := []string{"JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"}
	header, rows = withFGPUColumn(jobs, header, rows) // gpuview.go
	return writeTable(out(c), header, rows)
}

// jobFilter turns the filter options into the API's filter.
func jobFilter(c *ucli.Context) (api.JobFilter, error) {
	var f api.JobFilter
	var err error
	if f.Users, err = withMe(commaList(c.StringSlice("user")), c.Bool("me")); err != nil {
		return f, err
	}
	if err := addStates(&f, commaList(c.StringSlice("states"))); err != nil {
		return f, usageError{err}
	}
	ids, tasks, err := parseJobRefs(commaList(c.StringSlice("jobs")))
	if err != nil {
		return f, err
	}
	f.IDs, f.Tasks = ids, tasks
	if len(ids)+len(tasks) > 0 {
		f.All = true // a job asked for by ID is shown even once finished
	}
	return f, nil
}

func queueRow(j *api.Job, now time.Time) []string {
	nodes := j.NodeCount
	if len(j.Nodes) > 0 {
		nodes = len(j.Nodes)
	}
	if nodes < 1 {
		nodes = 1
	}
	where := "(" + reasonText(j.Reason) + ")"
	if j.State != api.StatePending && len(j.Nodes) > 0 {
		where = strings.Join(j.Nodes, ",")
	}
	return []string{
		api.JobRefText(j), j.Partition, j.Name, j.User, j.DisplayState(),
		jobspec.FormatDuration(int64(j.Elapsed(now) / time.Second)), strconv.Itoa(nodes), where,
	}
}

func reasonText(r api.Reason) string {
	if r == "" {
		return string(api.ReasonNone)
	}
	return string(r)
}

// parseJobRefs reads job IDs as users write them: 123 (a job, or every
// task of array job 123) or 123_4 (task 4 of it).
func parseJobRefs(words []string) (ids []uint64, tasks []api.TaskRef, err error) {
	for _, w := range words {
		id, task, err := api.ParseJobRef(w)
		if err != nil {
			return nil, nil, usageError{err}
		}
		if task != nil {
			tasks = append(tasks, api.TaskRef{JobID: id, Task: *task})
		} else {
			ids = append(ids, id)
		}
	}
	return ids, tasks, nil
}
