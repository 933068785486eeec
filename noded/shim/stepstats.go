package shim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/internal/fsutil"
)

// A running step's live statistics (sstat) come from its tasks' process
// trees: the tasks share the job's cgroup with every other step and the
// batch script, so the cgroup cannot tell a step's usage apart, while
// each task's processes can be found below the process the runner
// started for it.

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture corral runs on.
const clockTicks = 100

// writeTaskPids records each task's process as "RANK PID START" lines
// (START: its start time after boot, which tells it from a later process
// given the same PID); a failure only costs sstat its figures, never the
// step.
func writeTaskPids(dir string, tasks []*task) {
	var b strings.Builder
	for _, t := range tasks {
		pid := t.p.Pid()
		if p, ok := readProc("/proc", pid); ok {
			fmt.Fprintf(&b, "%d %d %d\n", t.rank, pid, p.start)
		}
	}
	_ = fsutil.ReplaceFile(filepath.Join(dir, TaskPidsFile), []byte(b.String()), 0o600)
}

func readProc(procRoot string, pid int) (proc, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, string(b))
}

// StepTaskStats reads the live figures of the tasks of the step whose
// directory is dir, from procRoot (/proc): each task's processes, the
// task's own and those below it, summed. A task whose process is gone
// (or whose PID another process has since) is left out.
func StepTaskStats(procRoot, dir string) ([]api.TaskStats, error) {
	f, err := os.Open(filepath.Join(dir, TaskPidsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	procs, err := listProcs(procRoot)
	if err != nil {
		return nil, err
	}
	started := make(map[int]uint64, len(procs))
	for _, p := range procs {
		started[p.pid] = p.start
	}
	var out []api.TaskStats
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rank, pid int
		var start uint64
		if _, err := fmt.Sscan(sc.Text(), &rank, &pid, &start); err != nil {
			continue
		}
		if at, alive := started[pid]; !alive || at != start {
			continue
		}
		ts := api.TaskStats{Rank: rank}
		for _, p := range treeOf(procs, pid) {
			addProcStats(&ts, procRoot, p)
		}
		ts.PIDs = append(ts.PIDs, pid)
		out = append(out, ts)
	}
	return out, sc.Err()
}

// addProcStats adds process pid's figures to ts: resident and virtual
// sizes now and at their peak, CPU time, major page faults.
func addProcStats(ts *api.TaskStats, procRoot string, pid int) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
		line := string(b)
		if i := strings.LastIndexByte(line, ')'); i >= 0 {
			// Fields from 3 (state) on: majflt is 12, utime 14, stime 15.
			f := strings.Fields(line[i+1:])
			if len(f) > 13 {
				ts.Pages += atoi64(f[9])
				ts.CPUUsec += (atoi64(f[11]) + atoi64(f[12])) * 1e6 / clockTicks
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		key, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		kb := atoi64(strings.TrimSuffix(strings.TrimSpace(v), " kB")) << 10
		switch key {
		case "VmRSS":
			ts.RSSBytes += kb
		case "VmHWM":
			ts.MaxRSSBytes += kb
		case "VmSize":
			ts.VMSizeBytes += kb
		case "VmPeak":
			ts.MaxVMSizeBytes += kb
		}
	}
}

func atoi64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
