package shim

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/internal/fsutil"
	"golang.org/x/sys/unix"
)

// A step launched with its allocation (srun outside one) has its runner
// up before the job's container runs. Rather than wait for the started
// file and then ask corral-init, the runner takes the shim's copy of the
// spawn socket, published in SpawnFile before the container starts, and
// queues its tasks' requests there: corral-init serves them as soon as it
// runs, so a task starts the moment the container can run it, not once
// the runner has woken and loaded the container's state. The request
// cannot be taken back: a cancel that comes while it waits ends the tasks
// once they start (watchCancel), and a container that never runs drops
// the request, whose reply socket then reads as corral-init gone.

// startedHook, if set (tests), runs just before the started file is
// written.
var startedHook func()

// publishSpawn writes SpawnFile: this process's PID and the number of
// its descriptor of the spawn socket's sending end. Best effort: without
// it a runner waits for the started file.
func publishSpawn(dir string, peer *os.File) {
	_ = fsutil.ReplaceFile(filepath.Join(dir, SpawnFile), fmt.Appendf(nil, "%d %d\n", os.Getpid(), peer.Fd()), 0o600)
}

// openShimSpawner takes a copy of the spawn socket the job's shim
// published in jobDir. It checks that the copy is a socket the shim made
// (a socket pair's peer credentials are its maker's), so a stale file
// naming a reused PID yields an error, not a stranger's socket. The
// spawner learns corral-init's PID namespace once the container runs.
func openShimSpawner(jobDir string, job *Job) (*initSpawner, error) {
	b, err := os.ReadFile(filepath.Join(jobDir, SpawnFile))
	if err != nil {
		return nil, err
	}
	var pid, num int
	if _, err := fmt.Sscanf(string(b), "%d %d\n", &pid, &num); err != nil || pid <= 0 || num < 0 {
		return nil, fmt.Errorf("%s: %q is not a PID and a descriptor", SpawnFile, b)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("the job's shim (PID %d): %w", pid, err)
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, num, 0)
	if err != nil {
		return nil, fmt.Errorf("taking the shim's spawn socket: %w", err)
	}
	unix.CloseOnExec(fd)
	typ, terr := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	cred, cerr := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if terr != nil || cerr != nil || typ != unix.SOCK_SEQPACKET || int(cred.Pid) != pid || cred.Uid != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("descriptor %d of process %d is not the job's spawn socket", num, pid)
	}
	sp := &initSpawner{ch: os.NewFile(uintptr(fd), "spawn")}
	sp.resolve = func() (string, error) { return startedInitNS(jobDir, job) }
	return sp, nil
}

// startedInitNS is corral-init's PID namespace, once it runs (it has
// answered): its PID from the started file, or from libcontainer's state
// where the file is not there yet or has none.
func startedInitNS(jobDir string, job *Job) (string, error) {
	pid, _ := startedFile(jobDir)
	if pid <= 0 {
		ctr, err := container.Open(job.RuncRoot, ContainerID(job.Launch.JobID))
		if err != nil {
			return "", err
		}
		if pid, err = ctr.InitPid(); err != nil {
			return "", err
		}
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return "", fmt.Errorf("%w (%v)", container.ErrNotRunning, err)
	}
	return ns, nil
}

// startedFile is what the started file says past its first line (the
// start time): corral-init's PID and the container's cgroup directories
// (startedText). Zero values where the file is not there, or was written
// before they were.
func startedFile(jobDir string) (initPid int, cgroups map[string]string) {
	b, err := os.ReadFile(filepath.Join(jobDir, StartedFile))
	if err != nil {
		return 0, nil
	}
	lines := strings.SplitN(string(b), "\n", 4)
	if len(lines) > 1 {
		initPid, _ = strconv.Atoi(lines[1])
	}
	if len(lines) > 2 {
		_ = json.Unmarshal([]byte(lines[2]), &cgroups) // a map: no reflection over a struct
	}
	return initPid, cgroups
}

// startedText is the started file: the start time, corral-init's PID
// and, as a JSON object on one line, the container's cgroup directories
// (libcontainer's CgroupPaths), so that a runner whose tasks were queued
// early needs no load of libcontainer's state for either.
func startedText(start time.Time, initPid int, cgroups map[string]string) []byte {
	cg, _ := json.Marshal(cgroups)
	return fmt.Appendf(nil, "%s\n%d\n%s\n", start.Format(time.RFC3339Nano), initPid, cg)
}

// earlyOOMWatch is watchOOM for tasks queued before the container ran:
// its cgroup was new when they started, so the count before them is 0;
// its directories come from the started file once the tasks have ended
// (libcontainer's state where the file has none yet).
func earlyOOMWatch(job *Job, jobDir string) func() *stepOOMWatch {
	return func() *stepOOMWatch {
		_, dirs := startedFile(jobDir)
		if dirs == nil {
			var err error
			if dirs, err = container.CgroupDirs(job.RuncRoot, ContainerID(job.Launch.JobID)); err != nil {
				log.Printf("the job's cgroup (for its OOM kills): %v", err)
				return nil
			}
		}
		return &stepOOMWatch{dirs: dirs}
	}
}
