package slurmfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// What a job field needs of the listing (api.JobsPath's views): the
// brief view, every field but the spec (summary), or the whole record.
const (
	NeedBrief = iota
	NeedSummary
	NeedFull
)

// jobField is one squeue field: its header, the view it needs and its
// value.
type jobField struct {
	header string
	need   int
	value  func(j *api.Job, e *Env) string
}

// uncut are the fields whose values squeue prints whole however narrow
// the column (it cuts every other value): durations and node lists;
// header says the header prints whole too (the node list columns').
var uncut = map[string]struct {
	value  func(j *api.Job) bool
	header bool
}{
	"M": {always, false},
	"l": {always, false},
	"L": {func(j *api.Job) bool { return j.TimeLimit > 0 }, false},
	"N": {always, true},
	"R": {func(j *api.Job) bool { return !showsReason(j) }, true},
	"Y": {always, true},
}

func always(*api.Job) bool { return true }

// jobFields are squeue's -o letters corral can fill, from squeue(1).
var jobFields = map[string]jobField{
	"a": {"ACCOUNT", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.Account) }},
	"A": {"JOBID", NeedBrief, func(j *api.Job, _ *Env) string { return strconv.FormatUint(j.ID, 10) }},
	"b": {"TRES_PER_NODE", NeedFull, func(j *api.Job, _ *Env) string { return gresPerNode(j) }},
	"c": {"MIN_CPUS", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.Itoa(j.CPUs) }},
	"C": {"CPUS", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.Itoa(j.CPUs * jobNodes(j)) }},
	"D": {"NODES", NeedBrief, func(j *api.Job, _ *Env) string { return strconv.Itoa(jobNodes(j)) }},
	"e": {"END_TIME", NeedSummary, endTime},
	"E": {"DEPENDENCY", NeedFull, func(j *api.Job, _ *Env) string { return dependency(j) }},
	"f": {"FEATURES", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.Constraint) }},
	"F": {"ARRAY_JOB_ID", NeedBrief, func(j *api.Job, _ *Env) string {
		if j.ArrayJobID != 0 {
			return strconv.FormatUint(j.ArrayJobID, 10)
		}
		return strconv.FormatUint(j.ID, 10)
	}},
	"g": {"GROUP", NeedSummary, func(j *api.Job, e *Env) string { return e.groupName(j.GID) }},
	"G": {"GROUP", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.FormatUint(uint64(j.GID), 10) }},
	"h": {"OVER_SUBSCRIBE", NeedFull, func(j *api.Job, _ *Env) string { return overSubscribe(j) }},
	"i": {"JOBID", NeedBrief, func(j *api.Job, _ *Env) string { return api.JobRefText(j) }},
	"j": {"NAME", NeedBrief, func(j *api.Job, _ *Env) string { return j.Name }},
	"k": {"COMMENT", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.Comment) }},
	"K": {"ARRAY_TASK_ID", NeedBrief, func(j *api.Job, _ *Env) string { return ArrayTask(j, "N/A") }},
	"l": {"TIME_LIMIT", NeedSummary, func(j *api.Job, _ *Env) string { return limit(j.TimeLimit, Compact) }},
	"L": {"TIME_LEFT", NeedSummary, func(j *api.Job, e *Env) string {
		if j.TimeLimit <= 0 {
			return "UNLIMITED"
		}
		return Compact(j.TimeLimit - int64(j.Elapsed(e.Now)/time.Second))
	}},
	"m": {"MIN_MEMORY", NeedSummary, func(j *api.Job, _ *Env) string { return MemMB(j.MemBytes) }},
	"M": {"TIME", NeedBrief, func(j *api.Job, e *Env) string { return Compact(int64(j.Elapsed(e.Now) / time.Second)) }},
	"n": {"REQ_NODES", NeedFull, func(j *api.Job, _ *Env) string { return nodeList(j.Spec.NodeList) }},
	"N": {"NODELIST", NeedBrief, func(j *api.Job, _ *Env) string { return nodeList(listedNodes(j)) }},
	"o": {"COMMAND", NeedBrief, func(*api.Job, *Env) string { return "(null)" }},
	"p": {"PRIORITY", NeedSummary, func(j *api.Job, _ *Env) string {
		return fmt.Sprintf("%16.14f", float64(priority(j))/float64(uint32(0xffffffff)))
	}},
	"P": {"PARTITION", NeedBrief, func(j *api.Job, _ *Env) string { return j.Partition }},
	"q": {"QOS", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.QOS) }},
	"Q": {"PRIORITY", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.FormatInt(priority(j), 10) }},
	"r": {"REASON", NeedBrief, func(j *api.Job, _ *Env) string { return reason(j) }},
	"R": {"NODELIST(REASON)", NeedBrief, func(j *api.Job, _ *Env) string {
		if showsReason(j) {
			return "(" + reason(j) + ")"
		}
		return nodeList(listedNodes(j))
	}},
	"S": {"START_TIME", NeedSummary, func(j *api.Job, e *Env) string {
		if j.StartTime != nil {
			return e.stamp(j.StartTime, "N/A")
		}
		return e.stamp(j.PlannedStart, "N/A")
	}},
	"t": {"ST", NeedBrief, func(j *api.Job, _ *Env) string { return j.DisplayState() }},
	"T": {"STATE", NeedBrief, func(j *api.Job, _ *Env) string { return StateLong(j) }},
	"u": {"USER", NeedBrief, func(j *api.Job, _ *Env) string { return j.User }},
	"U": {"UID", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.FormatUint(uint64(j.UID), 10) }},
	"V": {"SUBMIT_TIME", NeedSummary, func(j *api.Job, e *Env) string { return e.stamp(&j.SubmitTime, "N/A") }},
	"y": {"NICE", NeedFull, func(j *api.Job, _ *Env) string { return strconv.Itoa(j.Spec.Nice) }},
	"Y": {"SCHEDNODES", NeedSummary, func(j *api.Job, _ *Env) string { return orNull(nodeList(j.PlannedNodes)) }},
	"Z": {"WORK_DIR", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.WorkDir) }},
	// What corral does not have prints Slurm's unset value.
	"d": {"MIN_TMP_DISK", NeedBrief, func(*api.Job, *Env) string { return "0" }},
	"v": {"RESERVATION", NeedBrief, func(*api.Job, *Env) string { return "(null)" }},
	"w": {"WCKEY", NeedBrief, func(*api.Job, *Env) string { return "(null)" }},
	"x": {"EXC_NODES", NeedFull, func(j *api.Job, _ *Env) string { return nodeList(j.Spec.Exclude) }},
	"z": {"S:C:T", NeedBrief, func(*api.Job, *Env) string { return "*:*:*" }},
	"B": {"EXEC_HOST", NeedBrief, func(j *api.Job, _ *Env) string { return cmpOr(firstNode(j), "n/a") }},
	"H": {"SOCKETS_PER_NODE", NeedBrief, func(*api.Job, *Env) string { return "*" }},
	"I": {"CORES_PER_SOCKET", NeedBrief, func(*api.Job, *Env) string { return "*" }},
	"J": {"THREADS_PER_CORE", NeedBrief, func(*api.Job, *Env) string { return "*" }},
	"O": {"CONTIGUOUS", NeedBrief, func(*api.Job, *Env) string { return "0" }},
	"W": {"LICENSES", NeedBrief, func(*api.Job, *Env) string { return "(null)" }},
	"X": {"CORE_SPEC", NeedBrief, func(*api.Job, *Env) string { return "N/A" }},
}

// AllFields is squeue's "%all": every letter, a..z then A..Z, separated
// by bars. Slurm prints an empty column for a letter it has no field for
// ('s'); so does corral, for those and the ones it does not print.
func AllFields() []Field {
	var fields []Field
	for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		key := string(c)
		if _, ok := jobFields[key]; !ok {
			fields = append(fields, Field{Literal: true, Suffix: "|"})
			continue
		}
		fields = append(fields, Field{Key: key, Suffix: "|"})
	}
	fields[len(fields)-1].Suffix = ""
	return fields
}

// jobNames maps squeue's -O names (any case) to the letters above.
var jobNames = map[string]string{
	"account": "a", "jobid": "A", "tres-per-node": "b", "mincpus": "c", "numcpus": "C",
	"numnodes": "D", "endtime": "e", "dependency": "E", "feature": "f", "arrayjobid": "F",
	"groupname": "g", "groupid": "G", "oversubscribe": "h", "jobarrayid": "i", "name": "j", "comment": "k",
	"arraytaskid": "K", "timelimit": "l", "timeleft": "L", "minmemory": "m", "timeused": "M",
	"reqnodes": "n", "nodelist": "N", "command": "o", "prioritylong": "Q", "priority": "p",
	"partition": "P", "qos": "q", "reason": "r", "reasonlist": "R", "starttime": "S",
	"statecompact": "t", "state": "T", "username": "u", "userid": "U", "submittime": "V",
	"nice": "y", "schednodes": "Y", "workdir": "Z",
	"mintmpdisk": "d", "reservation": "v", "wckey": "w", "excnodes": "x", "batchhost": "B",
	"socketspernode": "H", "corespersocket": "I", "threadspercore": "J", "contiguous": "O",
	"licenses": "W", "corespec": "X",
}

// Squeue's default formats (squeue(1)).
const (
	SqueueDefault = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
	SqueueLong    = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
	SqueueStart   = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
)

// JobLayout is a parsed squeue format, ready to print jobs.
type JobLayout struct {
	Fields []Field
	keys   []string // the jobFields letter of each field ("" for literals)
	Need   int      // the listing view the fields need
}

// NewJobLayout resolves fields (from ParsePercent, or ParseNames when
// names is set) against squeue's fields. It returns the keys it does not
// know: Slurm reports each ("Invalid job format specification") and
// prints the others.
func NewJobLayout(fields []Field, names bool) (*JobLayout, []string) {
	l := &JobLayout{}
	var unknown []string
	for _, f := range fields {
		key := f.Key
		if names && !f.Literal {
			key = jobNames[strings.ToLower(f.Key)]
		}
		jf, ok := jobFields[key]
		if !f.Literal && !ok {
			unknown = append(unknown, f.Key)
			continue
		}
		l.Fields = append(l.Fields, f)
		l.keys = append(l.keys, key)
		l.Need = max(l.Need, jf.need)
	}
	return l, unknown
}

// Header is the layout's header line.
func (l *JobLayout) Header() string {
	return l.line(func(key string) (string, bool) { return jobFields[key].header, uncut[key].header })
}

// Row is one job's line.
func (l *JobLayout) Row(j *api.Job, e *Env) string {
	return l.line(func(key string) (string, bool) {
		u := uncut[key]
		return printable(jobFields[key].value(j, e)), u.value != nil && u.value(j)
	})
}

// line lays out the fields' cells, cut to their widths unless whole.
func (l *JobLayout) line(cell func(key string) (text string, whole bool)) string {
	var b strings.Builder
	for i, f := range l.Fields {
		if f.Literal {
			b.WriteString(f.Suffix)
			continue
		}
		text, whole := cell(l.keys[i])
		if whole {
			b.WriteString(f.Whole(text))
		} else {
			b.WriteString(f.Cell(text))
		}
	}
	return b.String()
}

// showsReason: squeue's %R shows the reason, not nodes, of a job not
// (or no longer) on nodes.
func showsReason(j *api.Job) bool { return j.State == api.StatePending || len(j.Nodes) == 0 }

// listedNodes are the nodes squeue lists for j: those still stopping
// their part of a COMPLETING job (squeue(1), %N), else its allocation.
func listedNodes(j *api.Job) []string {
	if j.Completing && len(j.CompletingNodes) > 0 {
		return j.CompletingNodes
	}
	return j.Nodes
}

// reason is the job's pending reason in Slurm's words: a job held at
// submit or by its owner is JobHeldUser there.
func reason(j *api.Job) string {
	switch j.Reason {
	case "":
		return string(api.ReasonNone)
	case api.ReasonJobHeld:
		return "JobHeldUser"
	}
	return string(j.Reason)
}

// dependency is the job's dependency as Slurm shows it: the conditions
// still waited for, each marked (unfulfilled), or (failed) once one can
// no longer hold; "(null)" once satisfied, as Slurm drops satisfied
// conditions. corral keeps the job's dependency state, not each
// condition's, so all of a waiting job's conditions show it.
func dependency(j *api.Job) string {
	d := j.Spec.Dependency
	var state string
	switch {
	case d == nil || j.State != api.StatePending:
		return "(null)"
	case j.Reason == api.ReasonDependency:
		state = "(unfulfilled)"
	case j.Reason == api.ReasonDependencyNeverSatisfied:
		state = "(failed)"
	default:
		return "(null)"
	}
	parts := make([]string, len(d.Conditions))
	for i, c := range d.Conditions {
		parts[i] = jobspec.FormatDependency(&api.Dependency{Conditions: []api.DependencyCondition{c}}) + state
	}
	sep := ","
	if d.Any {
		sep = "?"
	}
	return strings.Join(parts, sep)
}

// priority is the job's priority as Slurm shows it: 0 while held, as a
// hold sets it.
func priority(j *api.Job) int64 {
	if j.Hold != "" {
		return 0
	}
	return j.Priority
}

// endTime is %e: when the job ended, or will end at its limit once
// started or as planned.
func endTime(j *api.Job, e *Env) string { return e.stamp(jobEnd(j), "N/A") }

// printable keeps a value on its line: a name with a newline or an
// escape sequence must not forge rows.
func printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return strings.Map(func(r rune) rune {
				if r < ' ' || r == 0x7f {
					return '?'
				}
				return r
			}, s)
		}
	}
	return s
}
