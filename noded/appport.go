package noded

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/noded/shim"
)

// Who listens on an app's port, read from procfs: the listening sockets
// of the port (/proc/net/tcp and tcp6), and whether the job's processes
// (its cgroup's) hold every one of them.

var (
	errNotListening    = errors.New("nothing listens on the port")
	errForeignListener = errors.New("a process outside the job listens on the port")
)

// tcpListen is the state "0A" of /proc/net/tcp: LISTEN.
const tcpListen = "0A"

// ownsPort is nil when something listens on port and every listening
// socket on it is held by a process of job sj (its cgroup as its
// launch.json names it: jobPlacement).
func (d *Daemon) ownsPort(sj *shim.Job, port int) error {
	inodes, err := listeningInodes("/proc/net", port)
	if err != nil {
		return err
	}
	if len(inodes) == 0 {
		return errNotListening
	}
	place, err := d.jobPlacement(sj)
	if err != nil {
		return err
	}
	member, err := d.cg.MemberOf(place)
	if err != nil {
		return err
	}
	if err := eachJobProcess("/proc", member, func(pid int) { heldBy("/proc", pid, inodes) }); err != nil {
		return fmt.Errorf("job %d's processes: %w", sj.Launch.JobID, err)
	}
	for _, held := range inodes {
		if !held {
			return errForeignListener
		}
	}
	return nil
}

// listeningInodes are the socket inodes listening on port, over IPv4
// and IPv6, each marked not held yet.
func listeningInodes(procNet string, port int) (map[string]bool, error) {
	out := map[string]bool{}
	want := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(procNet, name))
		if errors.Is(err, fs.ErrNotExist) && name == "tcp6" {
			continue // IPv6 disabled
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != tcpListen || !strings.HasSuffix(fl[1], want) {
				continue
			}
			out[fl[9]] = false
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachJobProcess calls f with every process in the job's cgroup (read
// as the job socket reads a caller's: /proc/<pid>/cgroup).
func eachJobProcess(proc string, member cgroup.Member, f func(pid int)) error {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.Open(filepath.Join(proc, e.Name(), "cgroup"))
		if err != nil {
			continue // ended
		}
		in, err := member.Holds(cg)
		cg.Close()
		if err == nil && in {
			f(pid)
		}
	}
	return nil
}

// heldBy marks the inodes that process pid holds an open descriptor of.
func heldBy(proc string, pid int, inodes map[string]bool) {
	fdDir := filepath.Join(proc, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return // ended, or not ours to read: it holds nothing we can vouch for
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		ino := strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")
		if _, ok := inodes[ino]; ok {
			inodes[ino] = true
		}
	}
}
