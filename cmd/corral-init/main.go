// Command corral-init is PID 1 inside every corral job container.
//
// A shell script as PID 1 of a PID namespace ignores SIGTERM (the kernel
// drops signals PID 1 has no handler for), so a cancelled job would only
// die at SIGKILL. corral-init instead runs the script as its child,
// forwards SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGCONT to every
// process in the namespace, reaps orphans, and when the script ends writes
// an initproto.Report on fd 3 and exits with the script's status (128+signal
// if a signal ended it). Its exit takes the rest of the namespace with it.
// With --stdio-fds, the job's stdin, stdout and stderr arrive on fds 4, 5
// and 6 and are moved to 0, 1 and 2 first (initproto.StdioArg).
//
// With --hold instead of a script it runs nothing and holds the container
// until SIGTERM, SIGINT or SIGHUP (a job's extern role: steps exec into
// the container).
//
// With --spawn-fds it also starts step tasks on request
// (initproto.SpawnArg), in both roles.
//
// Usage: corral-init [--stdio-fds] [--spawn-fds] SCRIPT [ARG...] | --hold. A script
// without a #! line runs with /bin/sh. Build it static: CGO_ENABLED=0 go build ./cmd/corral-init.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/container/initproto"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == initproto.StdioArg {
		args = args[1:]
		if err := takeStdio(); err != nil {
			// Nowhere to write to but the report.
			return finish(reportFile(), initproto.Report{ExitCode: 127, Error: err.Error()})
		}
	}
	var sp *spawner
	if len(args) > 0 && args[0] == initproto.SpawnArg {
		args = args[1:]
		sp = newSpawner() // its fds close-on-exec before any fork
	}
	report := reportFile()
	if len(args) == 1 && args[0] == initproto.HoldArg {
		return hold(report, sp)
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: corral-init [--stdio-fds] SCRIPT [ARG...]")
		return finish(report, initproto.Report{ExitCode: 127, Error: "no script given"})
	}
	argv, err := command(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral-init:", err)
		return finish(report, initproto.Report{ExitCode: 127, Error: err.Error()})
	}

	sigs := make(chan os.Signal, 32)
	var forwarded []os.Signal
	for _, s := range initproto.ForwardedSignals {
		forwarded = append(forwarded, syscall.Signal(s))
	}
	// Notify before forking so a signal that arrives while the script
	// starts is queued and forwarded, not lost; then tell the shim that
	// signals reach the job from now on.
	signal.Notify(sigs, forwarded...)
	if report != nil {
		_, _ = fmt.Fprintln(report, initproto.Ready)
	}

	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		err = fmt.Errorf("cannot run %s: %w", argv[0], err)
		fmt.Fprintln(os.Stderr, "corral-init:", err)
		return finish(report, initproto.Report{ExitCode: 127, Error: err.Error()})
	}

	ended := make(chan syscall.WaitStatus, 1)
	go reap(pid, sp, ended)
	sp.start() // now that tasks are reaped
	for {
		select {
		case s := <-sigs:
			forward(pid, s.(syscall.Signal))
		case ws := <-ended:
			endTasks(sp)
			return finish(report, statusOf(ws))
		}
	}
}

// taskEndWait bounds how long step tasks still running when the script
// ends have to end on SIGTERM before this process exits.
const taskEndWait = 5 * time.Second

// endTasks gives step tasks still running when the script ends SIGTERM and
// a moment to end on it, as Slurm's steps get when their batch script
// exits, before this process's exit has the kernel SIGKILL whatever is
// left: without it a step ended by its job's time limit or its script's
// exit read as killed (0:9) or as ended by SIGTERM (0:15) by chance. Their
// runners learn how each ended.
func endTasks(sp *spawner) {
	if !sp.running() {
		return
	}
	// The tasks alone, not every process: a background srun of the script
	// would forward SIGTERM to its tasks on the other nodes, which the
	// job's end stops through their own nodes.
	sp.signal(syscall.SIGTERM)
	for deadline := time.Now().Add(taskEndWait); sp.running() && time.Now().Before(deadline); {
		reapOrphans(sp)
		time.Sleep(10 * time.Millisecond)
	}
}

// command decides how to run the script: directly if it starts with #!,
// otherwise with /bin/sh.
func command(args []string) ([]string, error) {
	f, err := os.Open(args[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 2)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n == 2 && string(head) == "#!" {
		return args, nil
	}
	return append([]string{"/bin/sh"}, args...), nil
}

// forward passes a signal on. As PID 1 of a namespace, kill(-1) reaches
// every other process in it. Anywhere else (tests) kill(-1) would reach
// the whole host, so only the script itself is signalled.
func forward(script int, s syscall.Signal) {
	if os.Getpid() == 1 {
		_ = syscall.Kill(-1, s)
		return
	}
	_ = syscall.Kill(script, s)
}

// reap waits for every child (orphans re-parent to PID 1), tells the
// runners of spawned tasks how theirs ended, and reports the script's
// own status.
func reap(script int, sp *spawner, ended chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: nothing left to wait for; cannot happen before the
			// script is reaped, but never spin.
			ended <- ws
			return
		}
		if pid == script {
			ended <- ws
			return
		}
		sp.ended(pid, ws, &ru)
	}
}

func statusOf(ws syscall.WaitStatus) initproto.Report {
	if ws.Signaled() {
		return initproto.Report{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return initproto.Report{ExitCode: ws.ExitStatus()}
}

// reportFile returns fd 3 when the shim passed it, marked close-on-exec so
// the script does not inherit it (it would keep the shim's read open).
func reportFile() *os.File {
	if _, err := fcntl(initproto.ReportFD, syscall.F_GETFD); err != nil {
		return nil
	}
	syscall.CloseOnExec(initproto.ReportFD)
	return os.NewFile(initproto.ReportFD, "report")
}

// takeStdio moves the job's files from initproto.StdinFD.. to 0, 1 and 2.
func takeStdio() error {
	for i, fd := range []int{initproto.StdinFD, initproto.StdoutFD, initproto.StderrFD} {
		if err := syscall.Dup3(fd, i, 0); err != nil {
			return fmt.Errorf("taking the job's stdio from fd %d: %w", fd, err)
		}
		syscall.Close(fd)
	}
	return nil
}

func fcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func finish(report *os.File, r initproto.Report) int {
	if report != nil {
		_ = json.NewEncoder(report).Encode(r)
		_ = report.Close()
	}
	return r.ExitCode
}
