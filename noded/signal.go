package noded

import (
	"fmt"
	"net/http"
	"syscall"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// A signal that does not end the job (scancel -s, POST /v1/jobs/signal
// from ctld) is delivered here, from the host, to the processes its scope
// names (package shim picks them, as for sbatch --signal); a step's goes
// to what that step's runner started on this node.

func (d *Daemon) handleJobSignal(w http.ResponseWriter, r *http.Request) {
	var req api.NodeSignalRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	n, code, err := d.deliverSignal(req)
	if err != nil {
		writeError(w, code, err.Error())
		return
	}
	d.log.Printf("job %d: signal %d (%s%s) reached %d processes", req.JobID, req.Signal, req.Scope, stepText(req.Step), n)
	writeJSON(w, http.StatusOK, struct{}{})
}

func stepText(step *int) string {
	if step == nil {
		return ""
	}
	return fmt.Sprintf(", step %d", *step)
}

// deliverSignal sends req's signal and returns how many processes got it,
// or an HTTP status and why nothing was sent.
func (d *Daemon) deliverSignal(req api.NodeSignalRequest) (int, int, error) {
	if req.Signal < 1 || req.Signal > api.MaxSignal {
		return 0, http.StatusBadRequest, fmt.Errorf("signal %d does not exist", req.Signal)
	}
	if !req.Scope.Valid() || req.Step != nil && req.Scope != api.SignalSteps {
		return 0, http.StatusBadRequest, fmt.Errorf("invalid signal scope %q", req.Scope)
	}
	sig := syscall.Signal(req.Signal)
	d.mu.Lock()
	j := d.jobs[req.JobID]
	if j == nil || j.cancelled {
		d.mu.Unlock()
		return 0, http.StatusNotFound, fmt.Errorf("job %d does not run on this node", req.JobID)
	}
	if req.Step != nil {
		defer d.mu.Unlock()
		st := j.steps[*req.Step]
		if st == nil || st.proc == nil && runnerPid(st) != st.pid {
			return 0, http.StatusNotFound, fmt.Errorf("step %d.%d does not run on this node", req.JobID, *req.Step)
		}
		n, err := shim.SignalStep("/proc", st.dir, st.pid, sig)
		return n, http.StatusInternalServerError, err
	}
	d.mu.Unlock()
	if !d.waitJobStarted(j, startWait/4) { // within ctld's 5 s for a signal
		return 0, http.StatusConflict, fmt.Errorf("job %d has not started on this node yet", req.JobID)
	}
	c, err := container.Open(d.runcRoot, shim.ContainerID(req.JobID))
	if err != nil {
		return 0, http.StatusNotFound, fmt.Errorf("job %d: %w", req.JobID, err)
	}
	init, err := c.InitPid()
	if err != nil {
		return 0, http.StatusInternalServerError, fmt.Errorf("job %d: %w", req.JobID, err)
	}
	n, err := shim.SignalJob("/proc", j.dir, init, sig, req.Scope)
	return n, http.StatusInternalServerError, err
}
