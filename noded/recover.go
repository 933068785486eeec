package noded

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
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// recover looks at job directories an earlier noded left behind:
//   - a result.json: the job ended while noded was away; queue its end.
//   - a live shim: reattach. The job is supervised again as if this noded
//     had launched it: its cores are held, its end is awaited (reattach)
//     and reported with the shim's exit code and usage, and a cancel
//     reaches it (SIGTERM to the shim). The shim alone enforces the time
//     limit, so nothing is enforced twice.
//   - neither: the supervisor died; remove any container and report the
//     job FAILED.
//
// Each job's step runners are recovered with it (recoverSteps): they are
// reattached while the job lives on, and stopped and reported when it has
// ended, before the job's own end.
func (d *Daemon) recover() error {
	ents, err := os.ReadDir(d.jobsDir)
	if err != nil {
		return err
	}
	defer d.gpus.stopIdleMPS() // daemons no recovered job uses
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || !e.IsDir() {
			continue
		}
		dir := filepath.Join(d.jobsDir, e.Name())
		sj, jerr := shim.ReadJob(dir)
		if res, err := shim.ReadResult(dir); err == nil {
			d.log.Printf("job %d ended while noded was away (%s); reporting it", id, res.State)
			d.gpus.recovered(id, dir, false) // gpus.go
			d.recoverEndedSteps(id, dir)
			end := endEvent(id, d.cfg.Name, res)
			d.put(end)
			if jerr == nil {
				d.ended.add(sj.Launch.Start, end)
			}
			if err := container.RemoveTree(dir); err != nil {
				d.log.Printf("job %d: %v", id, err)
			}
			continue
		}
		if pid := shimPid(dir); pid > 0 {
			d.log.Printf("job %d is still running under shim %d from an earlier noded; reattaching", id, pid)
			if s, err := shim.ReadSuspension(dir); err == nil && s.Since != nil {
				// Its cgroup stays frozen; ctld keeps it SUSPENDED.
				d.log.Printf("job %d is suspended (frozen since %s)", id, s.Since.Format(time.RFC3339))
			}
			j := &job{id: id, dir: dir, pid: pid, gpu: readClaim(dir), steps: map[int]*step{}}
			if jerr == nil {
				j.slots = sj.Slots
				d.cpus.take(sj.Slots)
				j.uid, j.ownerKnown, j.start = sj.Launch.UID, true, sj.Launch.Start
				j.sock = d.reopenJobSocket(dir, sj)
			}
			d.recoverSteps(j)
			d.gpus.recovered(id, dir, true)
			d.jobs[id] = j
			d.supervisors.Add(1)
			go d.reattach(j)
			continue
		}
		if err := d.removeShimLeftovers(id, dir); err != nil {
			return fmt.Errorf("job %d: %w", id, err)
		}
		d.gpus.recovered(id, dir, false)
		d.recoverEndedSteps(id, dir)
		d.put(api.JobEvent{JobID: id, Node: d.cfg.Name, Kind: api.EventEnded, Time: time.Now(),
			State: api.StateFailed, ExitCode: 1, Message: "the job's supervisor ended without a result while noded was down"})
		if err := container.RemoveTree(dir); err != nil {
			d.log.Printf("job %d: %v", id, err)
		}
	}
	return nil
}

// shimPid returns the PID in shim.pid if that process is alive and is a
// shim of this very directory, else 0. A shim's last argument is its job
// directory (ShimCommand + dir), whatever the shim binary is called.
func shimPid(dir string) int {
	return livePid(filepath.Join(dir, shim.PidFile), "\x00"+dir+"\x00")
}

// livePid returns the PID in pidFile if that process is alive and is
// the one that wrote it, else 0: its start time matches the one the file
// records (a shim's: it may have started as a spare, whose command line
// names no job), or, in a file without one, its command line ends with
// argsSuffix. Either way a reused PID is not taken for it.
func livePid(pidFile, argsSuffix string) int {
	pid, start, err := shim.ReadPidFile(pidFile)
	if err != nil {
		return 0
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	if start != 0 {
		if now, err := shim.ProcStart(pid); err != nil || now != start {
			return 0
		}
		return pid
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.HasSuffix(string(cmdline), argsSuffix) {
		return 0
	}
	return pid
}

// reattachPoll is how often a reattached shim is checked for its end. It
// is not noded's child, so it cannot be waited for; a poll of /proc costs
// next to nothing and an end is reported at most this much later.
const reattachPoll = 100 * time.Millisecond

// reattach supervises a shim an earlier noded started: once the shim is
// gone (exited, or a zombie of whoever inherited it) its result.json is
// final and the job is finished as supervise would.
func (d *Daemon) reattach(j *job) {
	defer d.supervisors.Done()
	for shimPid(j.dir) == j.pid {
		time.Sleep(reattachPoll)
	}
	res, err := shim.ReadResult(j.dir)
	if err != nil {
		if rerr := d.removeShimLeftovers(j.id, j.dir); rerr != nil {
			d.log.Printf("job %d: %v", j.id, rerr)
		}
		res = &shim.Result{State: api.StateFailed, ExitCode: 1, End: time.Now(),
			Message: "the job's supervisor ended without a result (reattached after a noded restart)" + logTail(filepath.Join(j.dir, shim.LogFile))}
	}
	d.log.Printf("job %d: reattached shim %d ended (%s)", j.id, j.pid, res.State)
	d.finish(j, res)
}

// removeShimLeftovers removes what a shim that died mid-job leaves behind:
// its container (processes, cgroups, libcontainer state) and the job's
// root mount (the host view's tmpfs or an image's overlay) and an image
// job's writable layer (a tmpfs), without which the job directory cannot
// be removed.
func (d *Daemon) removeShimLeftovers(id uint64, dir string) error {
	if err := container.Remove(d.runcRoot, shim.ContainerID(id)); err != nil {
		return fmt.Errorf("removing the container of a dead shim: %w", err)
	}
	if err := container.UnmountRoot(filepath.Join(dir, shim.RootfsDir), filepath.Join(dir, shim.LayerDir)); err != nil {
		d.log.Printf("job %d: %v", id, err)
	}
	// A shim that was a prepared spare leaves its preparation's
	// directory, and its container when the job did not adopt it.
	d.sweepSpares() // spareprepared.go
	return nil
}

// reopenJobSocket serves again the socket of a job launched with one,
// which died with the earlier noded. A failure leaves the job running
// without it: logged, as the job itself is unharmed.
func (d *Daemon) reopenJobSocket(dir string, sj *shim.Job) *jobSocket {
	if !sj.CtlSocket {
		return nil
	}
	place, err := d.jobPlacement(sj) // placement.go: an adopted spare's cgroup keeps its name
	var s *jobSocket
	if err == nil {
		s, err = d.openJobSocket(dir, place, &sj.Launch)
	}
	if err != nil {
		d.log.Printf("job %d: %v; srun and corral inside the job cannot reach the controller", sj.Launch.JobID, err)
	}
	return s
}
