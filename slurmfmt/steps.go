package slurmfmt

import (
	"io"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
)

// StepRow is one line of squeue -s: a running step and its job.
type StepRow struct {
	Step *api.Step
	Job  *api.Job
}

// stepField is one squeue -s field: header and value.
type stepField struct {
	header string
	value  func(r *StepRow, e *Env) string
}

// stepFields are squeue's step letters corral can fill (squeue(1)).
var stepFields = map[string]stepField{
	"A": {"NTASKS", func(r *StepRow, _ *Env) string { return strconv.Itoa(r.Step.Tasks) }},
	"i": {"STEPID", func(r *StepRow, _ *Env) string {
		return api.JobRefText(r.Job) + "." + strconv.Itoa(r.Step.StepID)
	}},
	"j": {"NAME", func(r *StepRow, _ *Env) string { return r.Step.Name }},
	"l": {"TIME_LIMIT", func(r *StepRow, _ *Env) string { return limit(r.Job.TimeLimit, Compact) }},
	"M": {"TIME", func(r *StepRow, e *Env) string {
		end := e.Now
		if r.Step.End != nil {
			end = *r.Step.End
		}
		return Compact(int64(end.Sub(r.Step.Start) / time.Second))
	}},
	"N": {"NODELIST", func(r *StepRow, _ *Env) string { return nodeList(r.Step.Nodes) }},
	"P": {"PARTITION", func(r *StepRow, _ *Env) string { return r.Job.Partition }},
	"S": {"START_TIME", func(r *StepRow, e *Env) string { return e.stamp(&r.Step.Start, "N/A") }},
	"T": {"STATE", func(r *StepRow, _ *Env) string { return string(r.Step.State) }},
	"u": {"USER", func(r *StepRow, _ *Env) string { return r.Job.User }},
	"U": {"UID", func(r *StepRow, _ *Env) string { return strconv.FormatUint(uint64(r.Job.UID), 10) }},
}

// SqueueSteps is squeue -s's default format.
const SqueueSteps = "%.15i %.8j %.9P %.8u %.9M %N"

// StepLayout is a parsed squeue -s format.
type StepLayout struct {
	Fields []Field
}

// NewStepLayout resolves an -o format for steps; it returns the letters
// it does not know.
func NewStepLayout(format string) (*StepLayout, []string) {
	l := &StepLayout{}
	var unknown []string
	for _, f := range ParsePercent(format) {
		if _, ok := stepFields[f.Key]; !f.Literal && !ok {
			unknown = append(unknown, f.Key)
			continue
		}
		l.Fields = append(l.Fields, f)
	}
	return l, unknown
}

// Header is the layout's header line.
func (l *StepLayout) Header() string {
	return Line(l.Fields, func(i int) string { return stepFields[l.Fields[i].Key].header })
}

// Row is one step's line.
func (l *StepLayout) Row(r *StepRow, e *Env) string {
	return Line(l.Fields, func(i int) string { return printable(stepFields[l.Fields[i].Key].value(r, e)) })
}

// StepRecord prints a step as `scontrol show step` does.
func StepRecord(w io.Writer, r *StepRow, e *Env) error {
	cpus := r.Step.CPUsPerTask * r.Step.Tasks
	if cpus == 0 {
		cpus = r.Job.CPUs * len(r.Step.Nodes)
	}
	return writeRecord(w, [][]string{
		{kv("StepId", api.JobRefText(r.Job)+"."+strconv.Itoa(r.Step.StepID)), kv("UserId", r.Job.UID),
			kv("StartTime", e.stamp(&r.Step.Start, "Unknown")), kv("TimeLimit", limit(r.Job.TimeLimit, Clock))},
		{kv("State", r.Step.State), kv("Partition", r.Job.Partition), kv("NodeList", orNull(nodeList(r.Step.Nodes)))},
		{kv("Nodes", len(r.Step.Nodes)), kv("CPUs", cpus), kv("Tasks", r.Step.Tasks), kv("Name", r.Step.Name), kv("Network", "(null)")},
		{kv("TRES", "cpu="+strconv.Itoa(cpus)+",node="+strconv.Itoa(len(r.Step.Nodes)))},
		{kv("ResvPorts", "(null)")},
		{kv("CPUFreqReq", "Default"), kv("Dist", "Block")},
	}, endOther, e)
}
