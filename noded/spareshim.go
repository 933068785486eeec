package noded

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/noded/shim"
)

// A spare shim (Config.SpareShim) is a `corral-shim --spare` started
// ahead of any launch: its Go runtime is up and it waits on a pipe
// (shim.JobFD) for a job directory. A launch hands it the job instead of
// starting a shim, which takes the shim's start-up (a 15 MB binary: 6 to
// 25 ms on a loaded 2-CPU node, docs/benchmarks.md) off the path from
// the launch to the job's container. The next spare is started once that
// container runs (or after spareRefill), so its start-up does not
// compete with the container's for the CPU. A spare that noded does not
// need (noded stops, or the spare died) sees its pipe close and exits.

// spareRefill bounds the wait for a job's start before the next spare is
// started anyway (a job that fails before its container runs).
const spareRefill = 2 * time.Second

// spareLogFile collects what a spare writes before it has a job (it
// writes to the job's shim.log once it has one).
const spareLogFile = "spare-shim.log"

// spareShim is a started spare: its process and noded's ends of its
// control, status and job pipes; prep is what it prepares (nil: a plain
// spare, sparePrepared).
type spareShim struct {
	cmd         *exec.Cmd
	ctl, status *os.File
	job         *os.File
	prep        *shim.Preparation
}

// startSpare starts a spare and keeps it, unless noded has one already
// or is stopping; with want, a prepared one (sparePrepared). It runs
// outside d.mu: the fork and exec take a while.
func (d *Daemon) startSpare(want *shim.Preparation) {
	d.mu.Lock()
	start := d.cfg.SpareShim && d.spare == nil && !d.spareStopped
	d.mu.Unlock()
	if !start {
		return
	}
	jobR, jobW, err := os.Pipe()
	if err != nil {
		d.log.Printf("spare shim: %v", err)
		return
	}
	argv := append(append([]string(nil), d.cfg.ShimCommand...), shim.SpareArg)
	cmd, ctl, status, err := startDetached(argv, filepath.Join(d.cfg.StateDir, spareLogFile), jobR)
	jobR.Close()
	if err != nil {
		jobW.Close()
		d.log.Printf("spare shim: %v", err)
		return
	}
	s := &spareShim{cmd: cmd, ctl: ctl, status: status, job: jobW}
	if want != nil {
		if s.prep, err = d.prepareSpare(s, want); err != nil { // sparePrepared.go
			d.log.Printf("spare shim %d: %v; it stays a plain one", cmd.Process.Pid, err)
		}
	}
	d.mu.Lock()
	keep := d.spare == nil && !d.spareStopped
	if keep {
		d.spare = s
	}
	d.mu.Unlock()
	if !keep {
		s.retire()
		return
	}
	go d.watchSpare(s)
}

// watchSpare notices the spare s dying while it waits (killed, or
// crashed while preparing), so that what it prepared, a container whose
// corral-init runs as a user, goes at once rather than at the next
// launch or noded's next start. It returns when s's process ends, which
// for a spare handed a job is that job's end: nothing to do then. No
// spare replaces a dead one here (one that dies at once would be
// restarted without end); the next launch's refill starts one.
func (d *Daemon) watchSpare(s *spareShim) {
	fd, err := unix.PidfdOpen(s.cmd.Process.Pid, 0)
	if err != nil {
		return // gone already, or no pidfds: takeSpare and the sweeps still find it
	}
	defer unix.Close(fd)
	// A pidfd polls readable once its process has ended, reaped or not.
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
		if err != unix.EINTR {
			break
		}
	}
	d.mu.Lock()
	dead := d.spare == s
	if dead {
		d.spare = nil
	}
	d.mu.Unlock()
	if !dead {
		return // handed a job, retired or stopped: whoever did that reaps it
	}
	d.log.Printf("spare shim %d ended while it waited; removing what it prepared", s.cmd.Process.Pid)
	s.retire()
	if s.prep != nil {
		d.removeSpare(filepath.Join(d.sparesDir(), s.prep.Token))
	}
}

// takeSpare hands dir to the spare, if noded has one that is alive; d.mu
// is held. The spare is then the job's shim, with its pipes.
func (d *Daemon) takeSpare(dir string) (cmd *exec.Cmd, ctl, status *os.File, ok bool) {
	s := d.spare
	if s == nil {
		return nil, nil, nil, false
	}
	d.spare = nil
	_, err := s.job.WriteString(dir + "\n")
	if cerr := s.job.Close(); err == nil {
		err = cerr
	}
	if err != nil { // it died: start one the usual way
		d.log.Printf("spare shim %d: %v; starting a shim", s.cmd.Process.Pid, err)
		if s.prep != nil {
			// Its container goes first: the job may have been placed in
			// its cgroup (sparePlacement).
			d.removeSpare(filepath.Join(d.sparesDir(), s.prep.Token))
		}
		go s.retire()
		return nil, nil, nil, false
	}
	return s.cmd, s.ctl, s.status, true
}

// refillSpare starts the next spare once the job that took the last one
// runs, or after spareRefill; next is what it prepares (nil: nothing).
func (d *Daemon) refillSpare(j *job, next *shim.Preparation) {
	t := time.NewTimer(spareRefill)
	defer t.Stop()
	select {
	case <-j.started:
	case <-t.C:
	}
	d.startSpare(next)
}

// stopSpare ends the spare when noded stops, and keeps a new one from
// starting.
func (d *Daemon) stopSpare() {
	d.mu.Lock()
	s := d.spare
	d.spare, d.spareStopped = nil, true
	d.mu.Unlock()
	if s != nil {
		s.retire()
	}
}

// retire closes the spare's job pipe, which ends it (a prepared one
// destroys its container first), and reaps it.
func (s *spareShim) retire() {
	s.job.Close()
	s.ctl.Close()
	s.status.Close()
	_ = s.cmd.Wait()
}
