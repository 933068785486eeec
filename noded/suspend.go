package noded

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// Suspend and resume (POST /v1/jobs/suspend from ctld) freeze and thaw
// the job's cgroup, steps' tasks included. The suspension is recorded in
// the job directory first, so the shim never takes frozen time for run
// time; the frozen cgroup outlives a noded restart, and a cancel thaws it
// before the job is stopped.

// startWait is how long a suspend or a signal waits for a job that was
// just launched to start.
const startWait = 10 * time.Second

func (d *Daemon) handleSuspend(w http.ResponseWriter, r *http.Request) {
	var req api.NodeSuspendRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d.mu.Lock()
	j := d.jobs[req.JobID]
	d.mu.Unlock()
	if j == nil || j.cancelled {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %d does not run on this node", req.JobID))
		return
	}
	if !d.waitJobStarted(j, startWait) {
		writeError(w, http.StatusConflict, fmt.Sprintf("job %d has not started on this node yet", req.JobID))
		return
	}
	if err := d.freeze(j, req.Suspend); err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("job %d: %v", req.JobID, err))
		return
	}
	d.log.Printf("job %d: %s", req.JobID, map[bool]string{true: "suspended (frozen)", false: "resumed (thawed)"}[req.Suspend])
	writeJSON(w, http.StatusOK, struct{}{})
}

// freeze freezes or thaws job j's cgroup and records it.
func (d *Daemon) freeze(j *job, frozen bool) error {
	dirs, err := container.CgroupDirs(d.runcRoot, shim.ContainerID(j.id))
	if err != nil {
		return err
	}
	now := time.Now()
	if frozen {
		if err := shim.RecordSuspension(j.dir, true, now); err != nil {
			return err
		}
	}
	if err := cgroup.Freeze(dirs, frozen); err != nil {
		if frozen { // it runs on: the shim must count its time again
			_ = cgroup.Freeze(dirs, false)
			_ = shim.RecordSuspension(j.dir, false, now)
		}
		return err
	}
	if !frozen {
		return shim.RecordSuspension(j.dir, false, time.Now())
	}
	return nil
}

// thawForEnd thaws a suspended job that is to be stopped: a frozen
// process takes no signal until thawed.
func (d *Daemon) thawForEnd(j *job) {
	if s, err := shim.ReadSuspension(j.dir); err != nil || s.Since == nil {
		return
	}
	if err := d.freeze(j, false); err != nil {
		d.log.Printf("job %d: thawing it to end it: %v", j.id, err)
	}
}
