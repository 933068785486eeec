package jobspec

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// PatternVars are the values an output pattern may refer to.
type PatternVars struct {
	JobID     uint64
	Name      string // %x
	User      string // %u
	Node      string // %N: the (first) node's name
	NodeIndex int    // %n: the node's index in the job, 0 for the batch step

	// ArrayJobID is the array's master job ID (%A); 0 for a job outside
	// an array, whose %A is its own ID.
	ArrayJobID uint64
	// ArrayTaskID is the task's index (%a; %b is it modulo 10). Outside an
	// array, %a prints Slurm's "no value", 4294967294, as sbatch does.
	ArrayTaskID int
	// Step is the step ID for %s and %J; "" means the batch script, whose
	// %s is "batch" and whose %J is just the job ID.
	Step     string
	TaskID   int // %t: the task's rank, 0 for the batch script
	Restarts int // %r: how often the job was requeued
}

// noArrayTask is what Slurm prints for %a outside an array (NO_VAL).
const noArrayTask = 4294967294

// maxPad caps a zero-padding width, as in Slurm ("%99j" pads to 10).
const maxPad = 10

// ExpandPattern replaces sbatch's file-name patterns: %j job ID, %J job
// ID (with ".step" for a numbered step), %A array master ID, %a array
// task index, %b index modulo 10, %s step, %t task rank, %r restart count,
// %x job name, %u user, %N node name, %n node index, %% a percent sign. A
// number between % and the letter zero-pads numbers to that width (%5j,
// at most 10), as in Slurm. Unknown letters are kept as written, so a
// literal % followed by anything else survives. A pattern containing a
// backslash is not expanded at all; its backslashes are dropped ("a\%j"
// is the file "a%j"), as sbatch does.
func ExpandPattern(pattern string, v PatternVars) string {
	if strings.Contains(pattern, `\`) {
		return strings.ReplaceAll(pattern, `\`, "")
	}
	if !strings.Contains(pattern, "%") {
		return pattern
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		j, width := i+1, 0
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			width = min(width*10+int(pattern[j]-'0'), maxPad)
			j++
		}
		if j >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		num, text, ok := v.field(pattern[j])
		switch {
		case pattern[j] == '%' && j == i+1:
			text, ok = "%", true
		case !ok:
			b.WriteString(pattern[i : j+1])
			i = j
			continue
		}
		for k := len(num); num != "" && k < width; k++ {
			b.WriteByte('0')
		}
		b.WriteString(num)
		b.WriteString(text)
		i = j
	}
	return b.String()
}

// field returns the value of pattern letter c: a number (which a width
// pads) or a text. ok is false for a letter that is no pattern.
func (v PatternVars) field(c byte) (num, text string, ok bool) {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	task := uint64(noArrayTask)
	if v.ArrayJobID != 0 {
		task = uint64(v.ArrayTaskID)
	}
	switch c {
	case 'j':
		return u(v.JobID), "", true
	case 'J':
		if v.Step == "" || v.Step == "batch" {
			return u(v.JobID), "", true
		}
		return u(v.JobID), "." + v.Step, true
	case 'A':
		if v.ArrayJobID != 0 {
			return u(v.ArrayJobID), "", true
		}
		return u(v.JobID), "", true
	case 'a':
		return u(task), "", true
	case 'b':
		return u(task % 10), "", true
	case 's':
		if v.Step == "" {
			return "", "batch", true
		}
		if _, err := strconv.ParseUint(v.Step, 10, 32); err == nil {
			return v.Step, "", true
		}
		return "", v.Step, true
	case 't':
		return strconv.Itoa(v.TaskID), "", true
	case 'r':
		return strconv.Itoa(v.Restarts), "", true
	case 'n':
		return strconv.Itoa(v.NodeIndex), "", true
	case 'x':
		return "", v.Name, true
	case 'u':
		return "", v.User, true
	case 'N':
		return "", v.Node, true
	}
	return "", "", false
}

// JobOutputPath is where a job's output (or error, or input) goes, as far
// as it is known now: pattern ("" is DefaultOutput) expanded and made
// absolute against the job's work directory. %N stays as written until
// the job has a node.
func JobOutputPath(j *api.Job, pattern string) string {
	if pattern == "" {
		pattern = DefaultOutput
	}
	node := "%N"
	if len(j.Nodes) > 0 {
		node = j.Nodes[0]
	}
	v := PatternVars{JobID: j.ID, Name: j.Name, User: j.User, Node: node, Restarts: j.Restarts}
	if j.ArrayTaskID != nil {
		v.ArrayJobID, v.ArrayTaskID = j.ArrayJobID, *j.ArrayTaskID
	}
	p := ExpandPattern(pattern, v)
	if !filepath.IsAbs(p) && j.Spec.WorkDir != "" {
		p = filepath.Join(j.Spec.WorkDir, p)
	}
	return p
}
