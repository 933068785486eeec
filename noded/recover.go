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
//   - a live shim: hold its cores and list it as running (not supervised:
//     reattaching is a later step).
//   - neither: the supervisor died; remove any container and report the
//     job FAILED.
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
		job, jerr := shim.ReadJob(dir)
		if res, err := shim.ReadResult(dir); err == nil {
			d.log.Printf("job %d ended while noded was away (%s); reporting it", id, res.State)
			d.gpus.recovered(id, dir, false) // gpus.go
			d.put(endEvent(id, d.cfg.Name, res))
			if err := container.RemoveTree(dir); err != nil {
				d.log.Printf("job %d: %v", id, err)
			}
			continue
		}
		if pid := shimPid(dir); pid > 0 {
			d.log.Printf("job %d is still running under shim %d from an earlier noded; holding its CPUs (reattach is not implemented: its end is reported at a later start)", id, pid)
			if jerr == nil {
				d.cpus.take(job.Slots)
			}
			d.orphans[id] = true
			d.gpus.recovered(id, dir, true)
			continue
		}
		if err := container.Remove(d.runcRoot, shim.ContainerID(id)); err != nil {
			return fmt.Errorf("job %d: removing the container of a dead shim: %w", id, err)
		}
		d.gpus.recovered(id, dir, false)
		d.put(api.JobEvent{JobID: id, Node: d.cfg.Name, Kind: api.EventEnded, Time: time.Now(),
			State: api.StateFailed, ExitCode: 1, Message: "the job's supervisor ended without a result while noded was down"})
		// An image job's overlay outlives a crashed shim.
		if err := container.UnmountImage(filepath.Join(dir, shim.RootfsDir), ""); err != nil {
			d.log.Printf("job %d: %v", id, err)
		}
		if err := container.RemoveTree(dir); err != nil {
			d.log.Printf("job %d: %v", id, err)
		}
	}
	return nil
}

// shimPid returns the PID in shim.pid if that process is alive and is a
// shim of this very directory, else 0.
func shimPid(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, shim.PidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "\x00shim\x00") || !strings.Contains(string(cmdline), dir) {
		return 0
	}
	return pid
}
