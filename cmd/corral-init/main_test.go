package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/container/initproto"
)

// The test binary doubles as corral-init when this variable is set, so the
// tests run the real main loop in a child process with a real fd 3.
const actAsInit = "CORRAL_INIT_UNDER_TEST"

func TestMain(m *testing.M) {
	if os.Getenv(actAsInit) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runInit runs corral-init on a script and returns its exit status and
// report (nil without one). prepare, if set, runs once the process has
// started. Every report of a script that ran must follow the ready line.
func runInit(t *testing.T, script string, args []string, prepare func(*exec.Cmd)) (int, *initproto.Report, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script")
	if script != "" {
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], append([]string{path}, args...)...)
	cmd.Env = append(os.Environ(), actAsInit+"=1", "DIR="+dir)
	cmd.ExtraFiles = []*os.File{w}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if prepare != nil {
		prepare(cmd)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	text, ready := strings.CutPrefix(string(data), initproto.Ready+"\n")
	data = []byte(text)
	if script != "" && !strings.Contains(script, "nonexistent") && !ready {
		t.Errorf("no %q line before the report %q", initproto.Ready, data)
	}
	if len(data) == 0 {
		return cmd.ProcessState.ExitCode(), nil, out.String()
	}
	var rep initproto.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("report %q: %v", data, err)
	}
	return cmd.ProcessState.ExitCode(), &rep, out.String()
}

func TestExitStatusAndReport(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		args      []string
		want      initproto.Report
		wantOut   string
		wantError string
	}{
		{name: "exit code", script: "exit 3\n", want: initproto.Report{ExitCode: 3}},
		{name: "no #! runs with sh, args follow", script: "echo \"$1-$2\"\n", args: []string{"a", "b"},
			want: initproto.Report{ExitCode: 0}, wantOut: "a-b\n"},
		{name: "#! line is honoured", script: "#!/bin/sh -e\nfalse\necho not reached\n", want: initproto.Report{ExitCode: 1}},
		{name: "killed by a signal", script: "kill -USR1 $$\n", want: initproto.Report{ExitCode: 128 + 10, Signal: 10}},
		{name: "missing interpreter", script: "#!/nonexistent/interp\n", want: initproto.Report{ExitCode: 127},
			wantError: "cannot run"},
		{name: "missing script", script: "", want: initproto.Report{ExitCode: 127}, wantError: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, rep, out := runInit(t, tc.script, tc.args, nil)
			if rep == nil {
				t.Fatalf("no report on fd 3 (exit %d, output %q)", code, out)
			}
			if code != tc.want.ExitCode {
				t.Errorf("exit status %d, want %d", code, tc.want.ExitCode)
			}
			if !strings.Contains(rep.Error, tc.wantError) || (tc.wantError == "" && rep.Error != "") {
				t.Errorf("report error %q, want it to mention %q", rep.Error, tc.wantError)
			}
			rep.Error = ""
			if *rep != tc.want {
				t.Errorf("report %+v, want %+v", *rep, tc.want)
			}
			if tc.wantOut != "" && out != tc.wantOut {
				t.Errorf("output %q, want %q", out, tc.wantOut)
			}
		})
	}
}

// TestForwardsSIGTERM: a signal sent to corral-init reaches the script,
// whose trap decides the exit status.
func TestForwardsSIGTERM(t *testing.T) {
	script := "trap 'exit 7' TERM\ntouch \"$DIR/ready\"\nwhile :; do sleep 0.05; done\n"
	code, rep, out := runInit(t, script, nil, func(cmd *exec.Cmd) {
		ready := filepath.Join(filepath.Dir(cmd.Args[1]), "ready")
		for i := 0; i < 1000; i++ {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Error(err)
		}
	})
	if code != 7 || rep == nil || rep.ExitCode != 7 || rep.Signal != 0 {
		t.Fatalf("exit %d report %+v output %q; want the trap's exit 7", code, rep, out)
	}
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sheb, plain, empty := write("a", "#!/usr/bin/env python3\n"), write("b", "echo hi\n"), write("c", "")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{sheb, "x"}, []string{sheb, "x"}},
		{[]string{plain, "x"}, []string{"/bin/sh", plain, "x"}},
		{[]string{empty}, []string{"/bin/sh", empty}},
	}
	for _, tc := range tests {
		got, err := command(tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("command(%v) = %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
}

// TestStdioFromFDs: with --stdio-fds the script's stdin, stdout and
// stderr are fds 4, 5 and 6 of corral-init (where the shim passes the
// job's files, runc's own stdio being /dev/null), and those fds are not
// left open in the script.
func TestStdioFromFDs(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("cat; echo err >&2; ls /proc/self/fd | tr '\\n' ' '\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := make([]*os.File, 3)
	for i, name := range []string{"in", "out", "err"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name+"-content\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_TRUNC*boolInt(i > 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], initproto.StdioArg, script)
	cmd.Env = append(os.Environ(), actAsInit+"=1")
	cmd.ExtraFiles = append([]*os.File{w}, files...)
	var own strings.Builder
	cmd.Stdout, cmd.Stderr = &own, &own
	err = cmd.Run()
	w.Close()
	if err != nil {
		t.Fatalf("corral-init: %v (its own output %q)", err, own.String())
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out"))
	errOut, _ := os.ReadFile(filepath.Join(dir, "err"))
	// ls's own directory fd is 3; fds the test binary inherited from its
	// caller may show too, but never 4, 5 or 6.
	fds := " " + strings.TrimPrefix(string(out), "in-content\n")
	if !strings.HasPrefix(string(out), "in-content\n0 1 ") || string(errOut) != "err\n" || own.String() != "" ||
		strings.Contains(fds, " 4 ") || strings.Contains(fds, " 5 ") || strings.Contains(fds, " 6 ") {
		t.Errorf("stdout %q, stderr %q, corral-init's own stdio %q", out, errOut, own.String())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestHold: --hold runs nothing, says ready, and ends with exit code 0
// and a report on SIGTERM; SIGUSR1 does not end it.
func TestHold(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], initproto.HoldArg)
	cmd.Env = append(os.Environ(), actAsInit+"=1")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make([]byte, len(initproto.Ready)+1)
	if _, err := io.ReadFull(r, line); err != nil || string(line) != initproto.Ready+"\n" {
		t.Fatalf("first line %q (%v), want %q", line, err, initproto.Ready)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hold ended with %v, want exit 0", err)
	}
	var rep initproto.Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil || rep != (initproto.Report{}) {
		t.Errorf("report %+v (%v), want exit code 0", rep, err)
	}
}
