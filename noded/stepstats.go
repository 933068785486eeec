package noded

import (
	"net/http"
	"strconv"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// handleStepStats serves ctld's POST /v1/steps/stats
// (api.StepStatsRequest): the live figures of a step's tasks on this
// node (sstat), read from their processes. A step this node does not
// run is 404.
func (d *Daemon) handleStepStats(w http.ResponseWriter, r *http.Request) {
	var req api.StepStatsRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	jobID, stepID := req.JobID, req.StepID
	d.mu.Lock()
	var dir string
	if j := d.jobs[jobID]; j != nil && j.steps[stepID] != nil {
		dir = j.steps[stepID].dir
	}
	d.mu.Unlock()
	if dir == "" {
		writeError(w, http.StatusNotFound, "step "+strconv.FormatUint(jobID, 10)+"."+strconv.Itoa(stepID)+" does not run on node "+d.cfg.Name)
		return
	}
	tasks, err := shim.StepTaskStats("/proc", dir)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "reading the step's tasks: "+err.Error())
		return
	}
	for i := range tasks {
		tasks[i].Node = d.cfg.Name
	}
	if tasks == nil {
		tasks = []api.TaskStats{}
	}
	writeJSON(w, http.StatusOK, tasks)
}
