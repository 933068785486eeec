package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
)

// --signal=[B:]SIG@SECONDS sends SIG that long before the time limit. As
// in Slurm, B: signals only the batch script; without it, every other
// process of the job (the script's children: what srun steps are under
// Slurm). The shim signals the processes itself, from the host: corral-init
// forwards only a few signals, and PID 1 of a namespace ignores the rest.

// warningTimer fires when the job's --signal is due; nil without one (or
// without a time limit).
func warningTimer(l *api.LaunchRequest) <-chan time.Time {
	sig := l.Signal
	if sig == nil || l.TimeLimit <= 0 || l.TimeLimit >= maxTimeLimit {
		return nil
	}
	return time.After(time.Duration(max(l.TimeLimit-int64(sig.Before), 0)) * time.Second)
}

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid int
	start     uint64 // clock ticks after boot
	ns        string // its PID namespace ("pid:[inode]"), "" if unknown
}

// signalJob sends sig to the job whose corral-init has host PID init: the
// batch script alone, or all but the script (its steps' tasks included).
func signalJob(procRoot string, init int, sig syscall.Signal, batchOnly bool) error {
	procs, err := listProcs(procRoot)
	if err != nil {
		return err
	}
	targets := signalTargets(procs, init, batchOnly)
	if len(targets) == 0 {
		return errors.New("no process to signal")
	}
	var errs []error
	for _, pid := range targets {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// signalTargets picks the processes to signal in the job whose
// corral-init is init: the batch script alone, or every other process of
// the job's PID namespace: init's descendants, and the steps' tasks,
// which enter the namespace from the host and are nobody's descendants
// there. The batch script is init's oldest child (orphans that init
// adopts are younger).
func signalTargets(procs []proc, init int, batchOnly bool) []int {
	children := make(map[int][]proc)
	initNS := ""
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pid == init {
			initNS = p.ns
		}
	}
	script := -1
	var oldest uint64
	for _, c := range children[init] {
		if script < 0 || c.start < oldest {
			script, oldest = c.pid, c.start
		}
	}
	if batchOnly {
		if script < 0 {
			return nil
		}
		return []int{script}
	}
	seen := map[int]bool{init: true, script: true}
	var out []int
	add := func(pid int) {
		if !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	queue := []int{init}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			queue = append(queue, c.pid)
			add(c.pid)
		}
	}
	for _, p := range procs {
		if initNS != "" && p.ns == initNS {
			add(p.pid)
		}
	}
	return out
}

// listProcs reads every process's parent and start time under procRoot.
// Processes that end meanwhile are skipped.
func listProcs(procRoot string) ([]proc, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, string(b)); ok {
			p.ns, _ = os.Readlink(filepath.Join(procRoot, e.Name(), "ns", "pid"))
			out = append(out, p)
		}
	}
	return out, nil
}

// parseStat reads ppid (field 4) and starttime (field 22) of a
// /proc/PID/stat line; the command (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseStat(pid int, line string) (proc, bool) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, start: start}, true
}
