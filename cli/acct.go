//go:build !slurmonly

package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
)

func acctCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "acct",
		Usage: "list finished jobs from the accounting history (like sacct)",
		UsageText: "corral acct [-u USERS] [-j IDS] [-s STATES] [-S TIME] [-E TIME] [--json]\n" +
			"   e.g. corral acct -s COMPLETED; corral acct -s FAILED,OUT_OF_MEMORY,TIMEOUT,NODE_FAIL -S now-7days",
		Flags: []ucli.Flag{
			&ucli.StringSliceFlag{Name: "user", Aliases: []string{"u"}, Usage: "only jobs of these users (root sees everyone's, others only their own)"},
			&ucli.StringSliceFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "only these jobs: 123, or 123_4 for one array task (comma list)"},
			&ucli.StringSliceFlag{Name: "state", Aliases: []string{"s"}, Usage: "only runs that ended in these states (names or short codes; REQUEUED for requeued runs)"},
			&ucli.StringFlag{Name: "starttime", Aliases: []string{"S"}, Usage: "only jobs that ended at or after TIME (sacct formats: 2026-01-20[T12:34], MMDD[YY], HH:MM, today, now-2hours)"},
			&ucli.StringFlag{Name: "endtime", Aliases: []string{"E"}, Usage: "only jobs that started (or were submitted) at or before TIME"},
			&ucli.BoolFlag{Name: "json", Usage: "print a JSON array of records"},
			socketFlag(),
		},
		Action: acct,
	}
}

func acct(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	f, err := acctFilter(c, time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	recs, err := client(c, "").Acct(ctx, f)
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []api.AcctRecord{}
	}
	if c.Bool("json") {
		return writeJSON(out(c), recs)
	}
	header := []string{"JOBID", "JOBNAME", "PARTITION", "USER", "STATE", "EXITCODE", "ELAPSED", "CPUTIME", "TOTALCPU", "MAXRSS", "NODELIST"}
	withGPU := false
	for _, r := range recs {
		withGPU = withGPU || r.GPUTimeS > 0
	}
	if withGPU {
		header = append(header[:len(header)-1], "GPUTIME", "NODELIST")
	}
	rows := make([][]string, 0, len(recs))
	now := time.Now()
	for i := range recs {
		rows = append(rows, acctRow(&recs[i], withGPU))
		for k := range recs[i].Steps {
			rows = append(rows, acctStepRow(&recs[i], &recs[i].Steps[k], withGPU, now))
		}
	}
	return writeTable(out(c), header, rows)
}

// acctStepRow is a step's line under its job, as sacct prints JOB.STEP:
// CPUTIME is its elapsed time × its tasks' CPUs.
func acctStepRow(r *api.AcctRecord, st *api.Step, withGPU bool, now time.Time) []string {
	end := now
	if st.End != nil {
		end = *st.End
	}
	elapsed := int64(max(end.Sub(st.Start), 0) / time.Second)
	row := []string{
		acctRef(r) + "." + api.StepName(st.StepID), st.Name, r.Partition, r.User, string(st.State),
		fmt.Sprintf("%d:%d", st.ExitCode, st.Signal), jobspec.FormatDuration(elapsed),
		jobspec.FormatDuration(elapsed * int64(st.Tasks*max(st.CPUsPerTask, 1))), jobspec.FormatDuration(st.CPUTimeUsec / 1e6),
		formatSize(st.PeakMemBytes),
	}
	if withGPU {
		row = append(row, "")
	}
	return append(row, hostlist.Compress(st.Nodes))
}

func acctRow(r *api.AcctRecord, withGPU bool) []string {
	row := []string{
		acctRef(r), r.Name, r.Partition, r.User, string(r.State), fmt.Sprintf("%d:%d", r.ExitCode, r.Signal),
		jobspec.FormatDuration(r.ElapsedS), jobspec.FormatDuration(r.CPUTimeS), jobspec.FormatDuration(r.TotalCPUUsec / 1e6),
		formatSize(r.MaxRSSBytes),
	}
	if withGPU {
		row = append(row, jobspec.FormatDuration(r.GPUTimeS))
	}
	nodes := strings.Join(r.Nodes, ",")
	if nodes == "" {
		nodes = "None assigned"
	}
	return append(row, nodes)
}

func acctRef(r *api.AcctRecord) string {
	switch {
	case r.ArrayTasks != "":
		return fmt.Sprintf("%d_[%s]", r.ArrayJobID, r.ArrayTasks)
	case r.ArrayTaskID != nil:
		return api.TaskRef{JobID: r.ArrayJobID, Task: *r.ArrayTaskID}.String()
	}
	return strconv.FormatUint(r.JobID, 10)
}

func acctFilter(c *ucli.Context, now time.Time) (api.AcctFilter, error) {
	ids, tasks, err := parseJobRefs(commaList(c.StringSlice("jobs")))
	if err != nil {
		return api.AcctFilter{}, err
	}
	f := api.AcctFilter{Users: dedupe(commaList(c.StringSlice("user"))), IDs: ids, Tasks: tasks}
	return f, acctStatesAndWindow(&f, commaList(c.StringSlice("state")), c.String("starttime"), c.String("endtime"), now)
}
