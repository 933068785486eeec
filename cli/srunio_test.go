package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-hpc/corral/stepio"
)

func TestExpandOutputPattern(t *testing.T) {
	f := outputFields{task: 3, node: 1, nodeName: "dev2", job: 42, step: 0, user: "ann", name: "train"}
	for pattern, want := range map[string]string{
		"out":               "out",
		"out-%t.txt":        "out-3.txt",
		"%j.%s-%n-%N":       "42.0-1-dev2",
		"%J_%u_%x":          "42.0_ann_train",
		"%3t-%5j":           "003-00042",
		"100%%-%t":          "100%-3",
		"/tmp/%N/%2n/%%t%t": "/tmp/dev2/01/%t3",
	} {
		got, err := expandOutputPattern(pattern, f)
		if err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", pattern, got, err, want)
		}
	}
	for _, bad := range []string{"out-%", "out-%3", "x%q"} {
		if _, err := expandOutputPattern(bad, f); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func fieldsFor(task int) outputFields {
	return outputFields{task: task, node: task / 2, nodeName: []string{"n1", "n2"}[task/2], job: 5, step: 1}
}

func TestLabelWriterBuffersLinesPerTaskAndStream(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := newSrunOutput(&stdout, &stderr, "", "", true, 12, fieldsFor)
	o.write(stepio.Stdout, 1, []byte("par"))
	o.write(stepio.Stdout, 10, []byte("ten\nten again\nten "))
	o.write(stepio.Stderr, 1, []byte("oops\n"))
	o.write(stepio.Stdout, 1, []byte("tial\nwhole\n"))
	o.flush(10) // task 10 ended mid-line
	o.write(stepio.Stdout, 3, []byte("unterminated"))
	if err := o.close(); err != nil {
		t.Fatal(err)
	}
	// Labels are as wide as the highest task number, as Slurm pads them.
	wantOut := "10: ten\n10: ten again\n 1: partial\n 1: whole\n10: ten  3: unterminated"
	if stdout.String() != wantOut {
		t.Errorf("stdout %q, want %q", stdout.String(), wantOut)
	}
	if stderr.String() != " 1: oops\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestOutputModes(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// -o to per-task files: stderr follows into the same file (no -e).
	o := newSrunOutput(&stdout, &stderr, filepath.Join(dir, "out-%j.%s-%t-%N"), "", false, 4, fieldsFor)
	for task := range 4 {
		o.write(stepio.Stdout, task, []byte("out\n"))
		o.write(stepio.Stderr, task, []byte("err\n"))
	}
	if err := o.close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out-5.1-0-n1", "out-5.1-1-n1", "out-5.1-2-n2", "out-5.1-3-n2"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(data) != "out\nerr\n" {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	if stdout.Len()+stderr.Len() != 0 {
		t.Errorf("terminal got %q %q", stdout.String(), stderr.String())
	}

	// -o per node with -l, -e none: tasks of a node share the file.
	o = newSrunOutput(&stdout, &stderr, filepath.Join(dir, "node-%n"), "none", true, 4, fieldsFor)
	for task := range 4 {
		o.write(stepio.Stdout, task, []byte("hi\n"))
		o.write(stepio.Stderr, task, []byte("lost\n"))
	}
	o.close()
	if data, _ := os.ReadFile(filepath.Join(dir, "node-1")); string(data) != "2: hi\n3: hi\n" {
		t.Errorf("node-1: %q", data)
	}
	if stdout.Len()+stderr.Len() != 0 {
		t.Errorf("terminal got %q %q", stdout.String(), stderr.String())
	}

	// -o 2: only task 2's output reaches srun's stdout; stderr is untouched.
	o = newSrunOutput(&stdout, &stderr, "2", "", false, 4, fieldsFor)
	for task := range 4 {
		o.write(stepio.Stdout, task, []byte{byte('0' + task)})
		o.write(stepio.Stderr, task, []byte{byte('a' + task)})
	}
	o.close()
	if stdout.String() != "2" || stderr.String() != "abcd" {
		t.Errorf("-o 2: stdout %q stderr %q", stdout.String(), stderr.String())
	}

	// A file that cannot be opened is reported once, not per write.
	var failures []string
	o = newSrunOutput(&stdout, &stderr, filepath.Join(dir, "missing", "x"), "", false, 1, fieldsFor)
	o.failed = func(path string, err error) { failures = append(failures, path) }
	o.write(stepio.Stdout, 0, []byte("a"))
	o.write(stepio.Stdout, 0, []byte("b"))
	if len(failures) != 1 {
		t.Errorf("failures %q, want one", failures)
	}
}

func TestTaskWords(t *testing.T) {
	for _, c := range []struct {
		ranks []int
		want  string
	}{
		{[]int{0}, "task 0"},
		{[]int{3, 0, 1, 2, 6}, "tasks 0-3,6"},
		{[]int{4, 6}, "tasks 4,6"},
		{[]int{7, 8, 10, 11, 12}, "tasks 7-8,10-12"},
	} {
		if got := taskWords(c.ranks); got != c.want {
			t.Errorf("taskWords(%v) = %q, want %q", c.ranks, got, c.want)
		}
	}
}

func TestExitCodeFolding(t *testing.T) {
	for _, tc := range []struct {
		ends []stepio.ExitStatus
		want int
	}{
		{nil, 0},
		{[]stepio.ExitStatus{{}, {}}, 0},
		{[]stepio.ExitStatus{{Code: 1}, {Code: 3}, {}}, 3},
		{[]stepio.ExitStatus{{Code: 2}, {Code: 137, Signal: 9}}, 137},
		{[]stepio.ExitStatus{{Signal: 15}}, 143}, // a signal counts as 128+signal even without a code
		{[]stepio.ExitStatus{{Code: 200}, {Signal: 2}}, 200},
	} {
		if got := foldExitCodes(tc.ends); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.ends, got, tc.want)
		}
	}
	for st, want := range map[stepio.ExitStatus]string{
		{}:                      "",
		{Code: 3}:               "Exited with exit code 3",
		{Code: 137, Signal: 9}:  "Killed",
		{Code: 143, Signal: 15}: "Terminated",
	} {
		if got := describeTaskEnd(st); got != want {
			t.Errorf("%+v: %q, want %q", st, got, want)
		}
	}
}
