package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/stepio"
)

// outputFields are what an -o/-e file name pattern may name.
type outputFields struct {
	task     int    // %t
	node     int    // %n, the node's index in the step
	nodeName string // %N
	job      uint64 // %j
	step     int    // %s
	user     string // %u
	name     string // %x
}

// expandOutputPattern replaces Slurm's %t %n %N %j %J %s %u %x and %% in
// p; a number after % zero-pads a numeric field (%3t is 007), as in
// Slurm.
func expandOutputPattern(p string, f outputFields) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		j := i + 1
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j == len(p) {
			return "", fmt.Errorf("pattern %q ends inside a %% field", p)
		}
		width, _ := strconv.Atoi(p[i+1 : j])
		num := func(n uint64) { fmt.Fprintf(&b, "%0*d", width, n) }
		switch p[j] {
		case '%':
			b.WriteByte('%')
		case 't':
			num(uint64(f.task))
		case 'n':
			num(uint64(f.node))
		case 'j':
			num(f.job)
		case 's':
			num(uint64(f.step))
		case 'J':
			num(f.job)
			b.WriteByte('.')
			num(uint64(f.step))
		case 'N':
			b.WriteString(f.nodeName)
		case 'u':
			b.WriteString(f.user)
		case 'x':
			b.WriteString(f.name)
		default:
			return "", fmt.Errorf("pattern %q: %%%c is not a field (use %%t %%n %%N %%j %%J %%s %%u %%x or %%%%)", p, p[j])
		}
		i = j
	}
	return b.String(), nil
}

// outputSink says where one stream of one task goes.
type outputSink int

const (
	sinkTerminal outputSink = iota // srun's own stdout or stderr
	sinkNone
	sinkFile
)

// outputMode classifies an -o/-e value for task: "" and "all" go to srun's
// stream, "none" nowhere, a task number sends only that task's output to
// srun's stream, anything else is a file pattern.
func outputMode(mode string, task int) outputSink {
	switch mode {
	case "", "all":
		return sinkTerminal
	case "none":
		return sinkNone
	}
	if n, err := strconv.Atoi(mode); err == nil {
		if n == task {
			return sinkTerminal
		}
		return sinkNone
	}
	return sinkFile
}

// srunOutput relays the tasks' output where -o, -e and -l say. It is used
// by one goroutine only (srun's event loop).
type srunOutput struct {
	stdout, stderr io.Writer
	out, err       string // -o, -e
	label          bool
	labelWidth     int                          // digits of the highest task number
	fields         func(task int) outputFields  // for file patterns
	files          map[string]*os.File          // by expanded name: tasks sharing a file share one handle
	partial        map[[2]int]*bytes.Buffer     // -l: an unfinished line, by (task, stream)
	failed         func(path string, err error) // reports a file that cannot be written, once
	broken         map[string]bool
	appendFiles    bool // --open-mode=append
}

func newSrunOutput(stdout, stderr io.Writer, out, errMode string, label bool, tasks int, fields func(int) outputFields) *srunOutput {
	// Slurm: without -e, standard error follows -o when it names files.
	if errMode == "" && outputMode(out, -1) == sinkFile {
		errMode = out
	}
	return &srunOutput{
		stdout: stdout, stderr: stderr, out: out, err: errMode, label: label,
		labelWidth: len(strconv.Itoa(max(tasks-1, 0))),
		fields:     fields,
		files:      map[string]*os.File{},
		partial:    map[[2]int]*bytes.Buffer{},
		broken:     map[string]bool{},
	}
}

// write relays p, a piece of task's stdout or stderr.
func (o *srunOutput) write(kind stepio.Kind, task int, p []byte) {
	if !o.label {
		o.emit(kind, task, p)
		return
	}
	key := [2]int{task, int(kind)}
	buf := o.partial[key]
	if buf == nil {
		buf = &bytes.Buffer{}
		o.partial[key] = buf
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			buf.Write(p)
			return
		}
		buf.Write(p[:i+1])
		o.emitLine(kind, task, buf.Bytes())
		buf.Reset()
		p = p[i+1:]
	}
}

// flush writes what is left of task's unfinished lines (at its end).
func (o *srunOutput) flush(task int) {
	for _, kind := range []stepio.Kind{stepio.Stdout, stepio.Stderr} {
		if buf := o.partial[[2]int{task, int(kind)}]; buf != nil && buf.Len() > 0 {
			o.emitLine(kind, task, buf.Bytes())
			buf.Reset()
		}
	}
}

func (o *srunOutput) emitLine(kind stepio.Kind, task int, line []byte) {
	prefixed := make([]byte, 0, len(line)+o.labelWidth+2)
	prefixed = fmt.Appendf(prefixed, "%*d: ", o.labelWidth, task)
	o.emit(kind, task, append(prefixed, line...))
}

func (o *srunOutput) emit(kind stepio.Kind, task int, p []byte) {
	mode, term := o.out, o.stdout
	if kind == stepio.Stderr {
		mode, term = o.err, o.stderr
	}
	switch outputMode(mode, task) {
	case sinkTerminal:
		term.Write(p) //nolint:errcheck // a closed stdout must not stop the step; srun ends with its tasks
	case sinkFile:
		name, _ := expandOutputPattern(mode, o.fields(task)) // checked when parsed
		if o.broken[name] {
			return
		}
		f, err := o.file(name)
		if err == nil {
			_, err = f.Write(p)
		}
		if err != nil {
			o.broken[name] = true
			if o.failed != nil {
				o.failed(name, err)
			}
		}
	}
}

// file opens name once, truncating it as Slurm's default open mode does
// (appending with --open-mode=append).
func (o *srunOutput) file(name string) (*os.File, error) {
	if f := o.files[name]; f != nil {
		return f, nil
	}
	mode := os.O_TRUNC
	if o.appendFiles {
		mode = os.O_APPEND
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|mode, 0o644)
	if err != nil {
		return nil, err
	}
	o.files[name] = f
	return f, nil
}

// close flushes every unfinished line and closes the files; the first
// close error is returned (a full disk shows there).
func (o *srunOutput) close() error {
	for key := range o.partial {
		o.flush(key[0])
	}
	var first error
	for name, f := range o.files {
		if err := f.Close(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", name, err)
		}
	}
	return first
}

// taskExitCode is the status a task's end counts as: its exit code, or
// 128+signal for a task a signal ended.
func taskExitCode(st stepio.ExitStatus) int {
	if st.Signal > 0 {
		return 128 + st.Signal
	}
	return st.Code
}

// foldExitCodes is srun's exit status: the highest of its tasks'.
func foldExitCodes(ends []stepio.ExitStatus) int {
	code := 0
	for _, st := range ends {
		code = max(code, taskExitCode(st))
	}
	return code
}

// taskWords names a node's tasks as Slurm's srun does in its errors:
// "task 0", "tasks 0-3,6".
func taskWords(ranks []int) string {
	rs := slices.Sorted(slices.Values(ranks))
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(rs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(rs[j]))
		}
		i = j + 1
	}
	if len(rs) == 1 {
		return "task " + b.String()
	}
	return "tasks " + b.String()
}

// describeTaskEnd is Slurm's words for a task that did not succeed
// ("Exited with exit code 3", "Killed"); "" for a success.
func describeTaskEnd(st stepio.ExitStatus) string {
	if st.Signal > 0 {
		name := signalText(st.Signal)
		return strings.ToUpper(name[:1]) + name[1:]
	}
	if st.Code != 0 {
		return fmt.Sprintf("Exited with exit code %d", st.Code)
	}
	return ""
}
