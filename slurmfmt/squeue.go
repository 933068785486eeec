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

// jobFields are squeue's -o letters corral can fill, from squeue(1).
var jobFields = map[string]jobField{
	"a": {"ACCOUNT", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.Account) }},
	"A": {"JOBID", NeedBrief, func(j *api.Job, _ *Env) string { return strconv.FormatUint(j.ID, 10) }},
	"b": {"TRES_PER_NODE", NeedFull, func(j *api.Job, _ *Env) string { return gresPerNode(j) }},
	"c": {"MIN_CPUS", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.Itoa(j.CPUs) }},
	"C": {"CPUS", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.Itoa(j.CPUs * jobNodes(j)) }},
	"D": {"NODES", NeedBrief, func(j *api.Job, _ *Env) string { return strconv.Itoa(jobNodes(j)) }},
	"e": {"END_TIME", NeedSummary, endTime},
	"E": {"DEPENDENCY", NeedFull, func(j *api.Job, _ *Env) string {
		if j.Spec.Dependency == nil {
			return "(null)"
		}
		return jobspec.FormatDependency(j.Spec.Dependency)
	}},
	"f": {"FEATURES", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.Constraint) }},
	"F": {"ARRAY_JOB_ID", NeedBrief, func(j *api.Job, _ *Env) string {
		if j.ArrayJobID != 0 {
			return strconv.FormatUint(j.ArrayJobID, 10)
		}
		return strconv.FormatUint(j.ID, 10)
	}},
	"g": {"GROUP", NeedSummary, func(j *api.Job, e *Env) string { return e.groupName(j.GID) }},
	"G": {"GROUP", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.FormatUint(uint64(j.GID), 10) }},
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
	"N": {"NODELIST", NeedBrief, func(j *api.Job, _ *Env) string { return nodeList(j.Nodes) }},
	"o": {"COMMAND", NeedBrief, func(*api.Job, *Env) string { return "(null)" }},
	"p": {"PRIORITY", NeedSummary, func(j *api.Job, _ *Env) string {
		return fmt.Sprintf("%16.14f", float64(j.Priority)/float64(uint32(0xffffffff)))
	}},
	"P": {"PARTITION", NeedBrief, func(j *api.Job, _ *Env) string { return j.Partition }},
	"q": {"QOS", NeedFull, func(j *api.Job, _ *Env) string { return orNull(j.Spec.QOS) }},
	"Q": {"PRIORITY", NeedSummary, func(j *api.Job, _ *Env) string { return strconv.FormatInt(j.Priority, 10) }},
	"r": {"REASON", NeedBrief, func(j *api.Job, _ *Env) string { return reason(j) }},
	"R": {"NODELIST(REASON)", NeedBrief, func(j *api.Job, _ *Env) string {
		if j.State == api.StatePending || len(j.Nodes) == 0 {
			return "(" + reason(j) + ")"
		}
		return nodeList(j.Nodes)
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
}

// jobNames maps squeue's -O names (any case) to the letters above.
var jobNames = map[string]string{
	"account": "a", "jobid": "A", "tres-per-node": "b", "mincpus": "c", "numcpus": "C",
	"numnodes": "D", "endtime": "e", "dependency": "E", "feature": "f", "arrayjobid": "F",
	"groupname": "g", "groupid": "G", "jobarrayid": "i", "name": "j", "comment": "k",
	"arraytaskid": "K", "timelimit": "l", "timeleft": "L", "minmemory": "m", "timeused": "M",
	"reqnodes": "n", "nodelist": "N", "command": "o", "prioritylong": "Q", "priority": "p",
	"partition": "P", "qos": "q", "reason": "r", "reasonlist": "R", "starttime": "S",
	"statecompact": "t", "state": "T", "username": "u", "userid": "U", "submittime": "V",
	"nice": "y", "schednodes": "Y", "workdir": "Z",
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
	return Line(l.Fields, func(i int) string { return jobFields[l.keys[i]].header })
}

// Row is one job's line.
func (l *JobLayout) Row(j *api.Job, e *Env) string {
	return Line(l.Fields, func(i int) string { return printable(jobFields[l.keys[i]].value(j, e)) })
}

func reason(j *api.Job) string {
	if j.Reason == "" {
		return string(api.ReasonNone)
	}
	return string(j.Reason)
}

func endTime(j *api.Job, e *Env) string {
	switch {
	case j.EndTime != nil:
		return e.stamp(j.EndTime, "N/A")
	case j.StartTime != nil && j.TimeLimit > 0:
		end := j.StartTime.Add(time.Duration(j.TimeLimit) * time.Second)
		return e.stamp(&end, "N/A")
	}
	return "N/A"
}

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
