package slurmfmt

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// AcctRow is one sacct line: a run from the accounting history, or a
// job still in the queue, with the job's record where the caller has it
// (limits, request, work directory: fields the history does not keep).
type AcctRow struct {
	Rec api.AcctRecord
	Job *api.Job // nil: not known; its fields print empty
	// Step, when set, makes this the line of one of the run's steps
	// (WithSteps).
	Step *api.Step
}

// acctField is one sacct field: its name, default width (negative:
// left-justified, as sacct's table has it) and value.
type acctField struct {
	name    string
	width   int
	needJob bool
	value   func(r *AcctRow, e *Env) string
}

// acctFields are sacct's fields corral can fill, with sacct's widths.
var acctFields = []acctField{
	{"Account", 10, false, func(r *AcctRow, _ *Env) string { return r.Rec.Account }},
	{"AllocCPUS", 10, false, func(r *AcctRow, _ *Env) string { return strconv.Itoa(allocCPUs(r)) }},
	{"AllocNodes", 10, false, func(r *AcctRow, _ *Env) string { return strconv.Itoa(allocNodes(r)) }},
	{"AllocTRES", 10, true, func(r *AcctRow, _ *Env) string { return tresText(r, allocCPUs(r), allocNodes(r)) }},
	{"AveRSS", 10, false, func(*AcctRow, *Env) string { return "" }}, // a step's
	{"Comment", 14, true, func(r *AcctRow, _ *Env) string { return jobSpec(r).Comment }},
	{"Constraints", 19, true, func(r *AcctRow, _ *Env) string { return jobSpec(r).Constraint }},
	{"CPUTime", 10, false, func(r *AcctRow, _ *Env) string { return Clock(r.Rec.CPUTimeS) }},
	{"CPUTimeRAW", 10, false, func(r *AcctRow, _ *Env) string { return strconv.FormatInt(r.Rec.CPUTimeS, 10) }},
	{"DerivedExitCode", 15, false, func(r *AcctRow, _ *Env) string { return derivedExitCode(r) }},
	{"Elapsed", 10, false, func(r *AcctRow, _ *Env) string { return Clock(r.Rec.ElapsedS) }},
	{"ElapsedRaw", 10, false, func(r *AcctRow, _ *Env) string { return strconv.FormatInt(r.Rec.ElapsedS, 10) }},
	{"Eligible", 19, true, func(r *AcctRow, e *Env) string {
		if r.Job != nil {
			return e.stamp(eligible(r.Job), "Unknown")
		}
		return e.stamp(&r.Rec.SubmitTime, "Unknown")
	}},
	{"End", 19, false, func(r *AcctRow, e *Env) string { return e.stamp(&r.Rec.EndTime, "Unknown") }},
	{"ExitCode", 8, false, func(r *AcctRow, _ *Env) string { return fmt.Sprintf("%d:%d", r.Rec.ExitCode, r.Rec.Signal) }},
	{"GID", 6, true, func(r *AcctRow, _ *Env) string { return jobInt(r, func(j *api.Job) int64 { return int64(j.GID) }) }},
	{"Group", 9, true, func(r *AcctRow, e *Env) string {
		if r.Job == nil {
			return ""
		}
		return e.groupName(r.Job.GID)
	}},
	{"JobID", -12, false, func(r *AcctRow, _ *Env) string { return AcctJobID(&r.Rec) }},
	{"JobIDRaw", -12, false, func(r *AcctRow, _ *Env) string { return strconv.FormatUint(r.Rec.JobID, 10) }},
	{"JobName", 10, false, func(r *AcctRow, _ *Env) string { return r.Rec.Name }},
	{"MaxRSS", 10, false, func(*AcctRow, *Env) string { return "" }}, // a step's
	{"NCPUS", 10, false, func(r *AcctRow, _ *Env) string { return strconv.Itoa(allocCPUs(r)) }},
	{"NNodes", 8, false, func(r *AcctRow, _ *Env) string { return strconv.Itoa(max(r.Rec.NodeCount, 1)) }},
	{"NodeList", 15, false, func(r *AcctRow, _ *Env) string {
		if len(r.Rec.Nodes) == 0 {
			return "None assigned"
		}
		return nodeList(r.Rec.Nodes)
	}},
	{"NTasks", 8, false, func(*AcctRow, *Env) string { return "" }},
	{"Partition", 10, false, func(r *AcctRow, _ *Env) string { return r.Rec.Partition }},
	{"Priority", 10, true, func(r *AcctRow, _ *Env) string { return jobInt(r, func(j *api.Job) int64 { return j.Priority }) }},
	{"QOS", 10, true, func(r *AcctRow, _ *Env) string { return jobSpec(r).QOS }},
	{"Reason", 22, true, func(r *AcctRow, _ *Env) string {
		if r.Job == nil || r.Job.Reason == "" {
			return "None"
		}
		return string(r.Job.Reason)
	}},
	{"ReqCPUS", 8, true, func(r *AcctRow, _ *Env) string {
		return jobInt(r, func(j *api.Job) int64 { return int64(j.CPUs * max(j.NodeCount, 1)) })
	}},
	{"ReqTRES", 10, true, func(r *AcctRow, _ *Env) string {
		nodes := max(r.Rec.NodeCount, 1)
		return tresText(r, r.Rec.CPUs*nodes, nodes)
	}},
	{"ReqMem", 10, true, func(r *AcctRow, e *Env) string {
		switch {
		case r.Job == nil:
			return ""
		case e != nil && e.MemUnit != 0:
			return e.memSize(r.Job.MemBytes)
		}
		return MemMB(r.Job.MemBytes)
	}},
	{"ReqNodes", 8, true, func(r *AcctRow, _ *Env) string {
		return jobInt(r, func(j *api.Job) int64 { return int64(max(j.NodeCount, 1)) })
	}},
	{"Restarts", 8, true, func(r *AcctRow, _ *Env) string { return jobInt(r, func(j *api.Job) int64 { return int64(j.Restarts) }) }},
	{"Start", 19, false, func(r *AcctRow, e *Env) string { return e.stamp(r.Rec.StartTime, "Unknown") }},
	{"State", 10, false, func(r *AcctRow, _ *Env) string { return acctState(r) }},
	{"Submit", 19, false, func(r *AcctRow, e *Env) string { return e.stamp(&r.Rec.SubmitTime, "Unknown") }},
	{"Timelimit", 10, true, func(r *AcctRow, _ *Env) string {
		if r.Job == nil {
			return ""
		}
		return limit(r.Job.TimeLimit, Clock)
	}},
	{"TimelimitRaw", 10, true, func(r *AcctRow, _ *Env) string {
		if r.Job == nil {
			return ""
		}
		if r.Job.TimeLimit <= 0 {
			return "UNLIMITED"
		}
		return strconv.FormatInt(r.Job.TimeLimit/60, 10)
	}},
	{"TotalCPU", 10, false, func(r *AcctRow, _ *Env) string { return CPUTime(r.Rec.TotalCPUUsec) }},
	{"UID", 6, false, func(r *AcctRow, _ *Env) string { return strconv.FormatUint(uint64(r.Rec.UID), 10) }},
	{"User", 9, false, func(r *AcctRow, _ *Env) string { return r.Rec.User }},
	{"WorkDir", 20, true, func(r *AcctRow, _ *Env) string { return jobSpec(r).WorkDir }},
}

// Sacct's field lists (sacct(1)); -l is the part of Slurm's long list
// corral can fill.
const (
	SacctDefault = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
	SacctBrief   = "JobID,State,ExitCode"
	SacctLong    = "JobID,JobIDRaw,JobName,Partition,MaxRSS,AveRSS,AllocCPUS,Elapsed,State,ExitCode,ReqMem,ReqTRES,AllocTRES,CPUTime,TotalCPU,NodeList"
)

// AcctColumn is one sacct column: the field and its width.
type AcctColumn struct {
	field acctField
	width int // negative: left-justified
}

// AcctLayout is a parsed sacct -o list.
type AcctLayout struct {
	Columns []AcctColumn
	// NeedJob: a field needs the job's record besides the history's.
	NeedJob bool
	// NeedSpec: a field needs the job's request (its spec), which only
	// the full listing view has.
	NeedSpec bool
}

// specFields read the job's request.
var specFields = []string{"Account", "Comment", "Constraints", "Eligible", "QOS", "WorkDir"}

// ParseAcctFormat reads a sacct -o list: field names in any case,
// comma-separated, each optionally with %WIDTH (right-justified; %-WIDTH
// left).
func ParseAcctFormat(list string) (*AcctLayout, error) {
	items, err := parseFieldList(list, len(acctFields), func(i int) (string, int) { return acctFields[i].name, acctFields[i].width })
	if err != nil {
		return nil, err
	}
	l := &AcctLayout{}
	for _, it := range items {
		col := AcctColumn{field: acctFields[it.field], width: it.width}
		l.Columns = append(l.Columns, col)
		l.NeedJob = l.NeedJob || col.field.needJob
		l.NeedSpec = l.NeedSpec || slices.Contains(specFields, col.field.name)
	}
	return l, nil
}

// fieldItem is one item of an accounting command's -o list: which field
// (its index) and its width.
type fieldItem struct{ field, width int }

// parseFieldList reads an -o list as sacct and sstat take it: names in
// any case, comma-separated, each optionally with %WIDTH; field(i) is the
// i-th of n fields' name and default width.
func parseFieldList(list string, n int, field func(i int) (string, int)) ([]fieldItem, error) {
	var out []fieldItem
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, widthText, hasWidth := strings.Cut(item, "%")
		i := -1
		for k := range n {
			if f, _ := field(k); strings.EqualFold(f, name) {
				i = k
				break
			}
		}
		if i < 0 {
			return nil, formatError(fmt.Sprintf("Invalid field requested: \"%s\"", name))
		}
		_, w := field(i)
		if hasWidth {
			var err error
			if w, err = strconv.Atoi(widthText); err != nil || w == 0 {
				return nil, formatError(fmt.Sprintf("Invalid field width: \"%s\"", item))
			}
		}
		out = append(out, fieldItem{field: i, width: w})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fields requested")
	}
	return out, nil
}

// formatError is a bad field list, in sacct's words (which begin with a
// capital).
type formatError string

func (e formatError) Error() string { return string(e) }

// AcctFieldNames lists every field sacct -o takes here (sacct -e).
func AcctFieldNames() []string {
	names := make([]string, 0, len(acctFields))
	for _, f := range acctFields {
		names = append(names, f.name)
	}
	return names
}

// AcctStyle is how sacct lays rows out.
type AcctStyle struct {
	NoHeader bool
	// Parsable: fields joined by Delimiter ("|" by default), with one
	// after the last too unless NoEnding (-p, or -P with NoEnding).
	Parsable  bool
	NoEnding  bool
	Delimiter string
}

// WriteAcct prints rows as sacct does.
func WriteAcct(w io.Writer, l *AcctLayout, rows []AcctRow, st AcctStyle, e *Env) error {
	cols := make([]Column, len(l.Columns))
	for i, c := range l.Columns {
		cols[i] = Column{Name: c.field.name, Width: c.width}
	}
	values := make([][]string, len(rows))
	for i := range rows {
		values[i] = make([]string, len(l.Columns))
		for k, c := range l.Columns {
			values[i][k] = acctValue(c.field, &rows[i], e)
		}
	}
	return WriteColumns(w, cols, values, st)
}

// acctValue is f's value on row r: a job's line, or a step's.
func acctValue(f acctField, r *AcctRow, e *Env) string {
	if r.Step == nil {
		return f.value(r, e)
	}
	if v := acctStepFields[f.name]; v != nil {
		return v(r, r.Step, e)
	}
	return ""
}

// Column is one column of sacct's and sshare's layout: a name (its
// header) and a width, negative for left-justified.
type Column struct {
	Name  string
	Width int
}

// WriteColumns prints values under cols as Slurm's accounting commands
// do: each cell cut (a '+' at its end) and padded to its width and
// followed by a space, the header over a rule of dashes; or, parsable,
// cells joined by the delimiter.
func WriteColumns(w io.Writer, cols []Column, values [][]string, st AcctStyle) error {
	var b strings.Builder
	line := func(cell func(k int, c Column) string) {
		for k, c := range cols {
			b.WriteString(cell(k, c))
			last := k == len(cols)-1
			switch {
			case !st.Parsable:
				b.WriteByte(' ')
			case !last || !st.NoEnding:
				b.WriteString(st.delimiter())
			}
		}
		b.WriteByte('\n')
	}
	fixed := func(c Column, v string) string {
		if st.Parsable {
			return v
		}
		return acctCell(v, c.Width)
	}
	if !st.NoHeader {
		line(func(_ int, c Column) string { // headers are cut, without the '+'
			if st.Parsable {
				return c.Name
			}
			return pad(c.Name, abs(c.Width), c.Width > 0, true)
		})
		if !st.Parsable {
			line(func(_ int, c Column) string { return strings.Repeat("-", abs(c.Width)) })
		}
	}
	for i := range values {
		line(func(k int, c Column) string { return fixed(c, printable(values[i][k])) })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (st AcctStyle) delimiter() string {
	if st.Delimiter == "" {
		return "|"
	}
	return st.Delimiter
}

// acctCell lays v out in a sacct column: cut with a '+' at the end when
// too long, padded on the side the width's sign says.
func acctCell(v string, width int) string {
	n := abs(width)
	if runes := []rune(v); len(runes) > n {
		v = string(runes[:n-1]) + "+"
	}
	return pad(v, n, width > 0, true)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// AcctJobID is a record's JobID as sacct prints it: 12, 12_3, 12_[4-9].
func AcctJobID(r *api.AcctRecord) string {
	switch {
	case r.ArrayTasks != "":
		return fmt.Sprintf("%d_[%s]", r.ArrayJobID, r.ArrayTasks)
	case r.ArrayTaskID != nil:
		return api.TaskRef{JobID: r.ArrayJobID, Task: *r.ArrayTaskID}.String()
	}
	return strconv.FormatUint(r.JobID, 10)
}

// AcctRowOf is the sacct row of a job still in the queue: what it has
// run so far, as of now.
func AcctRowOf(j *api.Job, now time.Time) AcctRow {
	elapsed := int64(j.Elapsed(now) / time.Second)
	nodes := jobNodes(j)
	rec := api.AcctRecord{
		JobID: j.ID, ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, ArrayTasks: j.ArrayTasks,
		Run: j.Restarts, Name: j.Name, Partition: j.Partition, Account: j.Spec.Account, User: j.User, UID: j.UID,
		State: j.State, SubmitTime: j.SubmitTime, StartTime: j.StartTime, ElapsedS: elapsed,
		CPUs: j.CPUs, NodeCount: nodes, CPUTimeS: elapsed * int64(j.CPUs*nodes),
		TotalCPUUsec: j.CPUTimeUsec, MaxRSSBytes: j.PeakMemBytes, Nodes: j.Nodes,
	}
	if j.EndTime != nil {
		rec.EndTime = *j.EndTime
	}
	return AcctRow{Rec: rec, Job: j}
}

// allocCPUs is what the run held: none before it started.
func allocCPUs(r *AcctRow) int {
	if r.Rec.StartTime == nil {
		return 0
	}
	return r.Rec.CPUs * max(r.Rec.NodeCount, 1)
}

func allocNodes(r *AcctRow) int {
	if r.Rec.StartTime == nil {
		return 0
	}
	return max(r.Rec.NodeCount, 1)
}

// tresText is sacct's AllocTRES and ReqTRES: billing, cpu, gres/gpu,
// mem, node in Slurm's order; empty for no CPUs (a run not started).
func tresText(r *AcctRow, cpus, nodes int) string {
	if cpus == 0 {
		return ""
	}
	parts := []string{"billing=" + strconv.Itoa(cpus), "cpu=" + strconv.Itoa(cpus)}
	if j := r.Job; j != nil {
		if j.GPUs > 0 {
			parts = append(parts, "gres/gpu="+strconv.Itoa(j.GPUs*nodes))
		}
		if j.MemBytes > 0 {
			parts = append(parts, "mem="+MemMB(j.MemBytes*int64(nodes)))
		}
	}
	return strings.Join(append(parts, "node="+strconv.Itoa(nodes)), ",")
}

// kilobytes is a memory size as sacct prints MaxRSS: kilobytes scaled up
// to the largest unit, two decimals when not whole; empty when not
// measured.
func kilobytes(bytes int64) string {
	if bytes <= 0 {
		return ""
	}
	return scaled(float64(bytes)/1024, "KMGTP")
}

func scaled(n float64, units string) string {
	u := 0
	for n > 1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	if n == float64(int64(n)) {
		return fmt.Sprintf("%.0f%c", n, units[u])
	}
	return fmt.Sprintf("%.2f%c", n, units[u])
}

func jobSpec(r *AcctRow) *api.JobSpec {
	if r.Job == nil {
		return &api.JobSpec{}
	}
	return &r.Job.Spec
}

func jobInt(r *AcctRow, f func(*api.Job) int64) string {
	if r.Job == nil {
		return ""
	}
	return strconv.FormatInt(f(r.Job), 10)
}
