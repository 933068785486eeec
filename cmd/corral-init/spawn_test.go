package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/container/initproto"
)

// holdSpawning runs corral-init --stdio-fds --spawn-fds --hold and returns
// the sending end of its spawn socket once it is ready; the process ends
// with the test. before, if set, gets that end before corral-init starts.
func holdSpawning(t *testing.T, before func(*os.File)) *os.File {
	t.Helper()
	ch, _ := startSpawning(t, before, initproto.HoldArg)
	return ch
}

// startSpawning runs corral-init --stdio-fds --spawn-fds with args (a
// script, or --hold) and returns the sending end of its spawn socket once
// it is ready, and the process, which gets SIGTERM and is waited for when
// the test ends. before, if set, gets that end before corral-init starts.
func startSpawning(t *testing.T, before func(*os.File), args ...string) (*os.File, *exec.Cmd) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "spawn"), os.NewFile(uintptr(fds[1]), "peer")
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(b)
	}
	cmd := exec.Command(os.Args[0], append([]string{initproto.StdioArg, initproto.SpawnArg}, args...)...)
	cmd.Env = append(os.Environ(), actAsInit+"=1")
	cmd.ExtraFiles = []*os.File{w, null, null, null, a, b}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	a.Close()
	if line, err := readLine(r); err != nil || line != initproto.Ready {
		t.Fatalf("corral-init said %q (%v), want %q", line, err, initproto.Ready)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		r.Close()
		b.Close()
	})
	return b, cmd
}

func readLine(f *os.File) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for {
		if _, err := f.Read(one); err != nil {
			return string(b), err
		}
		if one[0] == '\n' {
			return string(b), nil
		}
		b = append(b, one[0])
	}
}

// spawnReq sends req with files as a runner does and returns the reply
// socket and corral-init's Started answer with the files that came.
func spawnReq(t *testing.T, ch *os.File, req initproto.SpawnRequest, files ...*os.File) (int, initproto.SpawnStarted, []int) {
	t.Helper()
	reply := sendReq(t, ch, req, files...)
	var st initproto.SpawnStarted
	got, err := initproto.RecvMsg(reply, &st, 2)
	if err != nil {
		t.Fatal(err)
	}
	return reply, st, got
}

// sendReq sends req with files as a runner does and returns the reply
// socket.
func sendReq(t *testing.T, ch *os.File, req initproto.SpawnRequest, files ...*os.File) int {
	t.Helper()
	rf, err := os.CreateTemp(t.TempDir(), "req")
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	if err := json.NewEncoder(rf).Encode(req); err != nil {
		t.Fatal(err)
	}
	if _, err := rf.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]) })
	send := []int{fds[1], int(rf.Fd())}
	for _, f := range files {
		send = append(send, int(f.Fd()))
	}
	if err := initproto.SendMsg(int(ch.Fd()), struct{}{}, send...); err != nil {
		t.Fatal(err)
	}
	syscall.Close(fds[1])
	return fds[0]
}

// TestSpawn: a task corral-init spawns runs the request's command (found
// on the request's PATH) with its environment, directory and files; the
// runner gets its PID and a pidfd, then its exit status and resource
// usage once it is reaped. A command that cannot run, a working
// directory that cannot be entered, or a request with the wrong number
// of files, starts nothing and says why.
func TestSpawn(t *testing.T) {
	ch := holdSpawning(t, nil)
	dir := t.TempDir()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	reply, st, got := spawnReq(t, ch, initproto.SpawnRequest{
		Argv: []string{"sh", "-c", `echo "$FOO $(pwd) $(ps -o pgid= -p $$)"; echo "pid $$"; exit 3`},
		Env:  []string{"FOO=bar", "PATH=/nonexistent:/bin:/usr/bin"}, Cwd: dir,
	}, null, outW, outW)
	outW.Close()
	if st.Error != "" || st.Pid <= 0 || len(got) != 1 {
		t.Fatalf("started %+v with %d files, want a PID and a pidfd", st, len(got))
	}
	initproto.CloseAll(got)
	out, _ := io.ReadAll(outR)
	var e initproto.SpawnEnded
	if _, err := initproto.RecvMsg(reply, &e, 0); err != nil {
		t.Fatal(err)
	}
	ws := syscall.WaitStatus(e.Status)
	if !ws.Exited() || ws.ExitStatus() != 3 || e.MaxRSSKiB <= 0 {
		t.Errorf("ended %+v (exit %d), want exit 3 with its usage", e, ws.ExitStatus())
	}
	pid := " " + strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(out), "\n", 3)[1], "pid "))
	if want := "bar " + dir + " "; !strings.HasPrefix(string(out), want) || !strings.Contains(strings.SplitN(string(out), "\n", 2)[0], pid) {
		t.Errorf("the task wrote %q, want %q and its own process group", out, want)
	}
	if _, err := initproto.RecvMsg(reply, nil, 0); err != initproto.ErrClosed {
		t.Errorf("after the end: %v, want the reply socket closed", err)
	}

	// A runner gone before its task ends costs corral-init nothing.
	reply, st, got = spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/sh", "-c", "sleep 0.2"}}, null, null, null)
	if st.Error != "" {
		t.Fatal(st.Error)
	}
	initproto.CloseAll(got)
	syscall.Close(reply)
	reply, st, got = spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/sh", "-c", "sleep 0.5"}}, null, null, null)
	initproto.CloseAll(got)
	if _, err := initproto.RecvMsg(reply, &e, 0); st.Error != "" || err != nil || !syscall.WaitStatus(e.Status).Exited() {
		t.Errorf("a task after one whose runner left: %+v, %v, ended %+v", st, err, e)
	}

	_, st, got = spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"no-such-command"}, Env: []string{"PATH=/bin"}}, null, null, null)
	if !strings.Contains(st.Error, `"no-such-command": executable file not found in $PATH`) || len(got) != 0 {
		t.Errorf("a missing command: %+v, %d files", st, len(got))
	}
	_, st, _ = spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/true"}, Cwd: "/nonexistent"}, null, null, null)
	if !strings.Contains(st.Error, "cannot enter the working directory /nonexistent") {
		t.Errorf("a missing working directory: %+v", st)
	}
	_, st, _ = spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/true"}}, null)
	if !strings.Contains(st.Error, "1 files came with the request, want 3") {
		t.Errorf("too few files: %+v", st)
	}
}

// TestSpawnTerminal: with Terminal the task runs on a new terminal of
// the requested size, as its session's controlling terminal; the runner
// gets the master end.
func TestSpawnTerminal(t *testing.T) {
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Fatalf("this test needs /dev/ptmx: %v", err)
	}
	ch := holdSpawning(t, nil)
	reply, st, got := spawnReq(t, ch, initproto.SpawnRequest{
		Argv: []string{"/bin/sh", "-c", `stty size; [ "$(ps -o sid= -p $$)" -eq $$ ] && echo leader; tty`}, Env: []string{"PATH=/bin:/usr/bin"},
		Terminal: true, Rows: 33, Cols: 77,
	})
	if st.Error != "" || len(got) != 2 {
		t.Fatalf("started %+v with %d files, want a pidfd and the terminal", st, len(got))
	}
	syscall.Close(got[0])
	master := os.NewFile(uintptr(got[1]), "master")
	defer master.Close()
	var e initproto.SpawnEnded
	if _, err := initproto.RecvMsg(reply, &e, 0); err != nil {
		t.Fatal(err)
	}
	_ = master.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out []byte
	buf := make([]byte, 1024)
	for {
		n, err := master.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break // EIO once the slave side is closed
		}
	}
	if s := string(out); !strings.HasPrefix(s, "33 77\r\nleader\r\n/dev/pts/") {
		t.Errorf("the task wrote %q on its terminal, want its size, session leadership and the terminal's name", s)
	}
}

// TestSpawnBeforeReady: a request that waits in the socket while
// corral-init starts (a step launched with its allocation) is served
// once corral-init catches its tasks' ends, and a task that ends at once
// is still reaped and reported.
func TestSpawnBeforeReady(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var reply int
	holdSpawning(t, func(ch *os.File) {
		reply = sendReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/true"}}, null, null, null)
	})
	ended := make(chan error, 1)
	go func() {
		var st initproto.SpawnStarted
		got, err := initproto.RecvMsg(reply, &st, 2)
		initproto.CloseAll(got)
		if err == nil && st.Error != "" {
			err = errors.New(st.Error)
		}
		if err == nil {
			var e initproto.SpawnEnded
			_, err = initproto.RecvMsg(reply, &e, 0)
		}
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a speed check
		t.Fatal("no end reported for a task spawned as corral-init started: it was never reaped")
	}
}

// A step task still running when the batch script ends gets SIGTERM and
// ends on it before corral-init exits, as Slurm's steps do when their
// script exits: its runner learns it ended by SIGTERM. (In a container
// corral-init's exit would otherwise have the kernel SIGKILL it; here,
// outside a PID namespace, it would be left running with no end reported.)
func TestScriptEndTerminatesSpawnedTasks(t *testing.T) {
	dir := t.TempDir()
	gate := dir + "/go"
	script := dir + "/script"
	if err := os.WriteFile(script, []byte("#!/bin/sh\nwhile [ ! -e "+gate+" ]; do sleep 0.01; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ch, cmd := startSpawning(t, nil, script)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	reply, st, got := spawnReq(t, ch, initproto.SpawnRequest{Argv: []string{"/bin/sleep", "30"}}, null, null, null)
	initproto.CloseAll(got)
	if st.Error != "" {
		t.Fatal(st.Error)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil { // the script ends
		t.Fatal(err)
	}
	var e initproto.SpawnEnded
	if _, err := initproto.RecvMsg(reply, &e, 0); err != nil {
		t.Fatalf("no end reported for the task left running when the script ended: %v", err)
	}
	if ws := syscall.WaitStatus(e.Status); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the task ended with status %#x, want killed by SIGTERM", e.Status)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("corral-init after its script exited 0: %v", err)
	}
}
