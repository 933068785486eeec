package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/container/initproto"
)

// hold is --hold: no script, only PID 1's duties (forwarding signals,
// reaping orphans) until an ending signal, then a wait for the rest of
// the namespace. Steps' tasks are corral-init's children when sp started
// them, and whatever any task leaves behind is re-parented here.
func hold(report *os.File, sp *spawner) int {
	sigs := make(chan os.Signal, 32)
	var forwarded []os.Signal
	for _, s := range initproto.ForwardedSignals {
		forwarded = append(forwarded, syscall.Signal(s))
	}
	signal.Notify(sigs, append(forwarded, syscall.SIGCHLD)...)
	// Only now: a task that ended before SIGCHLD was caught would not be
	// reaped until the next one.
	sp.start()
	if report != nil {
		_, _ = fmt.Fprintln(report, initproto.Ready)
	}
	for s := range sigs {
		switch s {
		case syscall.SIGCHLD:
			reapOrphans(sp)
		case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
			if os.Getpid() == 1 {
				_ = syscall.Kill(-1, s.(syscall.Signal))
				for othersLeft() {
					reapOrphans(sp)
					time.Sleep(20 * time.Millisecond)
				}
			}
			return finish(report, initproto.Report{ExitCode: 0})
		default:
			if os.Getpid() == 1 { // elsewhere (tests) kill(-1) would reach the host
				_ = syscall.Kill(-1, s.(syscall.Signal))
			}
		}
	}
	return 0 // not reached: sigs is never closed
}

// reapOrphans collects every child that has ended, without blocking,
// and tells the runners of spawned tasks how theirs ended.
func reapOrphans(sp *spawner) {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		sp.ended(pid, ws, &ru)
	}
}

// othersLeft reports whether a process other than this one is in the PID
// namespace (the container's /proc shows only its own).
func othersLeft() bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	self := os.Getpid()
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != self {
			return true
		}
	}
	return false
}
