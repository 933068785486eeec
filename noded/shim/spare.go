package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A spare shim (`corral-shim --spare`) is started by noded ahead of any
// job, so that a launch does not wait for a 15 MB binary's start-up: it
// waits on JobFD for the job directory noded hands it, then points its
// output at the job's shim.log and runs that job as `corral-shim <dir>`
// would. Its command line does not name the job, so shim.pid carries
// the process's start time, which tells a reused PID apart (LivePid).
//
// noded may first write a Preparation on JobFD (a JSON line): the spare
// then prepares a container for an extern job of that identity while it
// waits (prepared.go), which the job that comes adopts if it fits.
const (
	SpareArg = "--spare"
	JobFD    = 5 // noded -> spare shim: a Preparation, then the job directory, one line each; end of file: not needed
)

// awaitJob reads JobFD: a Preparation, if noded sends one (prepared then,
// nil if preparing failed: logged, and the job runs the usual way), and
// the job directory; it then sends this process's output to the job's
// shim.log. ok is false when noded closed the pipe without a job (it
// stopped, or retired the spare): what was prepared is gone then.
func awaitJob() (dir string, pr *prepared, ok bool, err error) {
	f := os.NewFile(JobFD, "job")
	if f == nil {
		return "", nil, false, errors.New("no job pipe on fd 5")
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line, rerr := br.ReadString('\n')
	if rerr == nil && strings.HasPrefix(line, "{") {
		var p Preparation
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			log.Printf("spare: the preparation %q: %v", line, err)
		} else if pr, err = prepare(&p); err != nil {
			log.Printf("spare %s: preparing a container: %v", p.Token, err)
		}
		line, rerr = br.ReadString('\n')
	}
	if rerr != nil {
		pr.release()
		return "", nil, false, nil
	}
	dir = strings.TrimSuffix(line, "\n")
	if !filepath.IsAbs(dir) {
		return "", pr, false, fmt.Errorf("job directory %q is not absolute", dir)
	}
	logf, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", pr, false, err
	}
	defer logf.Close()
	for _, fd := range []int{1, 2} {
		if err := unix.Dup3(int(logf.Fd()), fd, 0); err != nil {
			return "", pr, false, err
		}
	}
	return dir, pr, true, nil
}

// pidLine is what shim.pid and runner.pid hold: the PID and the start
// time of the process (clock ticks since boot, /proc/PID/stat's 22nd
// field), when it can be read.
func pidLine(pid int) string {
	if start, err := ProcStart(pid); err == nil {
		return strconv.Itoa(pid) + " " + strconv.FormatUint(start, 10) + "\n"
	}
	return strconv.Itoa(pid) + "\n"
}

// ProcStart is process pid's start time from /proc/PID/stat.
func ProcStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	p, ok := parseStat(pid, string(b))
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unreadable", pid)
	}
	return p.start, nil
}

// ReadPidFile reads shim.pid or runner.pid: the PID, and its start time
// (0 in a file written before it was recorded).
func ReadPidFile(path string) (pid int, start uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, 0, fmt.Errorf("%s is empty", path)
	}
	if pid, err = strconv.Atoi(f[0]); err != nil || pid <= 0 {
		return 0, 0, fmt.Errorf("%s: %q is no PID", path, f[0])
	}
	if len(f) > 1 {
		if start, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("%s: %q is no start time", path, f[1])
		}
	}
	return pid, start, nil
}
