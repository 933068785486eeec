package shim

import "github.com/corral-hpc/corral/api"

// Test access to the process-tree logic of signals (signal.go).

type Proc struct {
	PID, PPID int
	Start     uint64
	NS        string
}

func toProcs(ps []Proc) []proc {
	in := make([]proc, len(ps))
	for i, p := range ps {
		in[i] = proc{pid: p.PID, ppid: p.PPID, start: p.Start, ns: p.NS}
	}
	return in
}

func SignalTargets(ps []Proc, init int, tasks []int, scope api.SignalScope) []int {
	return signalTargets(toProcs(ps), init, tasks, scope)
}

func Descendants(ps []Proc, root int) []int { return descendants(toProcs(ps), root) }

func ParseStat(pid int, line string) (Proc, bool) {
	p, ok := parseStat(pid, line)
	return Proc{PID: p.pid, PPID: p.ppid, Start: p.start}, ok
}

var LimitExtension = limitExtension

// ExecTasksOnly makes this process's step runner start tasks by
// libcontainer's exec, as for a corral-init without a spawn socket.
func ExecTasksOnly() { execOnly = true }

// HoldStarted makes the shims run by this test process wait for hold to
// close before they write the started file; the func it returns undoes it.
func HoldStarted(hold <-chan struct{}) func() {
	startedHook = func() { <-hold }
	return func() { startedHook = nil }
}

// ReadStarted reads the job directory's started file past its time.
func ReadStarted(jobDir string) (initPid int, cgroups map[string]string) { return startedFile(jobDir) }
