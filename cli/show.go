//go:build !slurmonly

package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/slurmfmt"
)

func showCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "show",
		Usage:     "show one object in detail (like scontrol show)",
		UsageText: "corral show job ID [--json]",
		Flags:     []ucli.Flag{socketFlag()},
		Subcommands: []*ucli.Command{{
			Name:      "job",
			Aliases:   []string{"jobs"},
			Usage:     "every field of one job, finished or not",
			UsageText: "corral show job ID [--json]",
			Flags: []ucli.Flag{
				&ucli.BoolFlag{Name: "json", Usage: "print the job as JSON"},
				socketFlag(),
			},
			Action: showJob,
		}},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("cannot show %q: use corral show job ID", c.Args().First())
			}
			return usageErrorf("missing what to show: use corral show job ID")
		},
	}
}

func showJob(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("give exactly one job ID (got %d arguments)", c.NArg())
	}
	id, task, err := api.ParseJobRef(c.Args().First())
	if err != nil {
		return usageError{err}
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	job, err := client(c, "").JobRef(ctx, refText(id, task))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(out(c), job)
	}
	return writeJobDetails(out(c), job, time.Now())
}

// writeJobDetails prints a job as scontrol prints one: Key=Value pairs, a
// few per line, continuation lines indented. Times print in now's location.
func writeJobDetails(w io.Writer, j *api.Job, now time.Time) error {
	at := func(t *time.Time) string { return formatTime(t, now.Location()) }
	exit := "N/A"
	if j.ExitCode != nil {
		exit = fmt.Sprintf("%d:%d", *j.ExitCode, j.Signal)
	}
	limit := "UNLIMITED"
	if j.TimeLimit > 0 {
		limit = jobspec.FormatDuration(j.TimeLimit)
	}
	groups := make([]string, len(j.Groups))
	for i, g := range j.Groups {
		groups[i] = strconv.FormatUint(uint64(g), 10)
	}
	var history []string
	for _, h := range j.History {
		entry := string(h.State) + "@" + at(&h.Time)
		if h.Reason != "" {
			entry += "(" + string(h.Reason) + ")"
		}
		history = append(history, entry)
	}
	stdout := jobspec.JobOutputPath(j, j.Spec.Output)
	stderr := stdout
	if j.Spec.Error != "" {
		stderr = jobspec.JobOutputPath(j, j.Spec.Error)
	}
	lines := [][]string{
		{kv("JobId", j.ID), kv("JobName", j.Name)},
		{kv("UserId", fmt.Sprintf("%s(%d)", j.User, j.UID)), kv("GroupId", j.GID), kv("Groups", list(groups))},
		{kv("Priority", j.Priority), kv("Partition", j.Partition)},
		{kv("JobState", j.State), kv("Reason", reasonText(j.Reason)), kv("ExitCode", exit)},
		{kv("RunTime", jobspec.FormatDuration(int64(j.Elapsed(now)/time.Second))), kv("TimeLimit", limit)},
		{kv("SubmitTime", at(&j.SubmitTime)), kv("StartTime", at(j.StartTime)), kv("EndTime", at(j.EndTime))},
		{kv("PlannedStart", at(j.PlannedStart)), kv("PlannedNodes", list(j.PlannedNodes))},
		{kv("NodeList", list(j.Nodes)), kv("NumNodes", max(j.NodeCount, len(j.Nodes), 1)), kv("NumCPUs", j.CPUs),
			kv("Mem", formatSize(j.MemBytes)), kv("Shm", shmText(j.Spec.ShmBytes))},
		{kv("PeakMem", formatSize(j.PeakMemBytes)), kv("CPUTime", jobspec.FormatDuration(j.CPUTimeUsec/1e6))},
		{kv("WorkDir", j.Spec.WorkDir)},
		{kv("StdOut", stdout)},
		{kv("StdErr", stderr)},
		{kv("Args", list(j.Spec.Args)), kv("Script", fmt.Sprintf("%d bytes", len(j.Spec.Script))),
			kv("Environment", fmt.Sprintf("%d variables", len(j.Spec.Env)))},
		{kv("Message", none(j.Message))},
		{kv("History", list(history))},
	}
	lines = append(lines[:2], append(pipelineLines(j, now.Location()), lines[2:]...)...) // pipeline fields, when the job has any
	lines = withGPULines(j, lines)                                                       // gpuview.go
	if len(j.Steps) > 0 {
		lines = append(lines, []string{kv("Steps", list(stepsText(j.Steps, now)))})
	}
	if len(j.Spec.Apps) > 0 {
		lines = append(lines, []string{kv("Apps", list(appsText(j)))})
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString("   ")
		}
		b.WriteString(oneLine(strings.Join(l, " ")))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// stepsText is each running step as JOB.STEP(state,nodes,tasks,elapsed).
func stepsText(steps []api.Step, now time.Time) []string {
	out := make([]string, len(steps))
	for i, st := range steps {
		out[i] = fmt.Sprintf("%d.%s(%s,%s,%d tasks,%s)", st.JobID, api.StepName(st.StepID), st.State,
			hostlist.Compress(st.Nodes), st.Tasks, jobspec.FormatDuration(int64(now.Sub(st.Start)/time.Second)))
	}
	return out
}

// appsText is each published app as NAME=PORT(served at).
func appsText(j *api.Job) []string {
	out := make([]string, len(j.Spec.Apps))
	for i, a := range j.Spec.Apps {
		out[i] = fmt.Sprintf("%s=%d(%s)", a.Name, a.Port, api.AppPath(j.ID, a.Name))
	}
	return out
}

func kv(key string, value any) string { return fmt.Sprintf("%s=%v", key, value) }

func list(items []string) string {
	if len(items) == 0 {
		return "(null)"
	}
	return strings.Join(items, ",")
}

func none(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func shmText(b int64) string {
	if b == 0 {
		return "default"
	}
	return formatSize(b)
}

// formatTime prints a time as scontrol does; Unknown when unset.
func formatTime(t *time.Time, loc *time.Location) string {
	if t == nil || t.IsZero() {
		return "Unknown"
	}
	return t.In(loc).Format("2006-01-02T15:04:05")
}

// pipelineLines are the show lines for arrays, dependencies, holds,
// begin times, nice and requeues; none for a job that uses none of them.
func pipelineLines(j *api.Job, loc *time.Location) [][]string {
	var lines [][]string
	if j.ArrayJobID != 0 {
		line := []string{kv("ArrayJobId", j.ArrayJobID), kv("ArrayTaskId", slurmfmt.ArrayTask(j, "(null)"))}
		if a := j.Spec.Array; a != nil {
			line = append(line, kv("Array", jobspec.FormatArray(*a)))
		}
		lines = append(lines, line)
	}
	var line []string
	if d := j.Spec.Dependency; d != nil {
		line = append(line, kv("Dependency", jobspec.FormatDependency(d)))
	}
	if j.Hold != "" {
		line = append(line, kv("Hold", j.Hold))
	}
	if b := j.Spec.Begin; b != nil {
		line = append(line, kv("BeginTime", formatTime(b, loc)))
	}
	if j.Spec.Nice != 0 {
		line = append(line, kv("Nice", j.Spec.Nice))
	}
	if j.Restarts > 0 {
		line = append(line, kv("Restarts", j.Restarts))
	}
	if len(line) > 0 {
		lines = append(lines, line)
	}
	return lines
}

// formatSize prints bytes the way sinfo users read them: 1.0G, 512.0M.
func formatSize(b int64) string {
	if b <= 0 {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size {
			return fmt.Sprintf("%.1f%s", float64(b)/float64(u.size), u.suffix)
		}
	}
	return fmt.Sprintf("%dB", b)
}
