package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
)

// A signal that does not end the job (sbatch --signal, scancel -s) reaches
// the processes Slurm 22.05 would signal (api.SignalScope): the steps'
// (the default), the batch shell alone (B:, -b) or the batch shell and
// everything it started (-f). The processes are signalled from the host:
// corral-init forwards only a few signals, and PID 1 of a namespace
// ignores the rest.

// warningTimer fires when the job's --signal is due; nil without one (or
// without a time limit).
func warningTimer(l *api.LaunchRequest) <-chan time.Time {
	sig := l.Signal
	if sig == nil || l.TimeLimit <= 0 || l.TimeLimit >= maxTimeLimit {
		return nil
	}
	return time.After(time.Duration(max(l.TimeLimit-int64(sig.Before), 0)) * time.Second)
}

// warningScope is the scope of a --signal: B: is the batch shell, as
// Slurm's KILL_JOB_BATCH; without it the steps (KILL_STEPS_ONLY).
func warningScope(sig *api.JobSignal) api.SignalScope {
	if sig.BatchOnly {
		return api.SignalBatch
	}
	return api.SignalSteps
}

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid int
	state     byte   // R, S, D, Z (a zombie), X (dead), ...
	start     uint64 // clock ticks after boot
	ns        string // its PID namespace ("pid:[inode]"), "" if unknown
}

// SignalJob sends sig to the processes of scope in the job whose
// corral-init has host PID init and whose directory is jobDir, and
// returns how many it signalled. None is not an error: a job without
// steps has nothing for SignalSteps, as in Slurm.
func SignalJob(procRoot, jobDir string, init int, sig syscall.Signal, scope api.SignalScope) (int, error) {
	procs, err := listProcs(procRoot)
	if err != nil {
		return 0, err
	}
	files, _ := filepath.Glob(filepath.Join(jobDir, StepsDir, "*", TaskPidsFile))
	return killAll(signalTargets(procs, init, taskRoots(procs, files...), scope), sig)
}

// SignalStep sends sig to the processes of the step whose directory is
// stepDir and whose runner has host PID runner: its tasks and their
// descendants, as Slurm signals a step's processes. The tasks are those
// of its tasks file (corral-init's children) and the runner's
// descendants (tasks execed by libcontainer); the runner itself is not
// signalled.
func SignalStep(procRoot, stepDir string, runner int, sig syscall.Signal) (int, error) {
	procs, err := listProcs(procRoot)
	if err != nil {
		return 0, err
	}
	pids := descendants(procs, runner)
	for _, root := range taskRoots(procs, filepath.Join(stepDir, TaskPidsFile)) {
		pids = append(pids, treeOf(procs, root)...)
	}
	return killAll(pids, sig)
}

// taskRoots are the tasks of the steps' tasks files (writeTaskPids) that
// still run: the PID's process started when the file says, so a PID
// reused since is not taken for a task.
func taskRoots(procs []proc, files ...string) []int {
	started := make(map[int]uint64, len(procs))
	for _, p := range procs {
		started[p.pid] = p.start
	}
	var out []int
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var rank, pid int
			var start uint64
			if _, err := fmt.Sscan(line, &rank, &pid, &start); err != nil {
				continue
			}
			if at, alive := started[pid]; alive && at == start {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killAll(pids []int, sig syscall.Signal) (int, error) {
	var errs []error
	n := 0
	for _, pid := range pids {
		err := syscall.Kill(pid, sig)
		switch {
		case err == nil:
			n++
		case !errors.Is(err, syscall.ESRCH): // ended meanwhile: nothing to signal
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
		}
	}
	return n, errors.Join(errs...)
}

// signalTargets picks the processes of scope in the job whose corral-init
// is init; tasks are the steps' tasks that corral-init started (its
// children, from the steps' tasks files). The batch script is init's
// oldest child that is no task (orphans that init adopts are younger);
// the script's tree is every other descendant of init (orphans included:
// in Slurm they stay in the script's process group). The steps are the
// tasks' trees and the namespace's processes outside init's tree (tasks
// libcontainer execed enter the namespace from the host).
func signalTargets(procs []proc, init int, tasks []int, scope api.SignalScope) []int {
	initNS := ""
	for _, p := range procs {
		if p.pid == init {
			initNS = p.ns
		}
	}
	if initNS == "" {
		return nil
	}
	var steps []int
	for _, p := range procs {
		if p.pid == init || p.ns != initNS {
			continue
		}
		if slices.Contains(tasks, p.pid) {
			steps = append(steps, treeOf(procs, p.pid)...)
		}
	}
	var tree []int // init's, less the tasks'
	for _, pid := range descendants(procs, init) {
		if !slices.Contains(steps, pid) {
			tree = append(tree, pid)
		}
	}
	switch scope {
	case api.SignalBatch:
		script := -1
		var oldest uint64
		for _, p := range procs {
			if p.ppid == init && !slices.Contains(steps, p.pid) && (script < 0 || p.start < oldest) {
				script, oldest = p.pid, p.start
			}
		}
		if script < 0 {
			return nil
		}
		return []int{script}
	case api.SignalFull:
		return tree
	case api.SignalSteps:
		for _, p := range procs {
			if p.ns == initNS && p.pid != init && !slices.Contains(tree, p.pid) && !slices.Contains(steps, p.pid) {
				steps = append(steps, p.pid)
			}
		}
		return steps
	}
	return nil
}

// descendants lists root's descendants (not root itself), parents before
// children.
func descendants(procs []proc, root int) []int {
	children := make(map[int][]int)
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []int
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
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
	return proc{pid: pid, ppid: ppid, state: f[0][0], start: start}, true
}
