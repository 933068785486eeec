package shim

// Test access to the process-tree logic of --signal (signal.go).

type Proc struct {
	PID, PPID int
	Start     uint64
	NS        string
}

func SignalTargets(ps []Proc, init int, batchOnly bool) []int {
	in := make([]proc, len(ps))
	for i, p := range ps {
		in[i] = proc{pid: p.PID, ppid: p.PPID, start: p.Start, ns: p.NS}
	}
	return signalTargets(in, init, batchOnly)
}

func ParseStat(pid int, line string) (Proc, bool) {
	p, ok := parseStat(pid, line)
	return Proc{PID: p.pid, PPID: p.ppid, Start: p.start}, ok
}
