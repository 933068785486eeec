package ctld

import (
	"net/http"
	"strconv"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// stepsEndpoint serves a job's steps: create one (srun), list them,
// cancel one.
type stepsEndpoint struct{ srv *Server }

// stepJobID is the job the path's {id} names: a job ID, not an array
// reference (a task's step names the task's own job ID, SLURM_JOB_ID).
func stepJobID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, fault.Errorf(fault.Invalid, "invalid job ID %q: steps belong to a job ID (an array task's own)", r.PathValue("id"))
	}
	return id, nil
}

// create serves POST /v1/jobs/{id}/steps with an api.StepRequest.
func (e stepsEndpoint) create(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := stepJobID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req api.StepRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	grant, err := e.srv.createStep(caller, id, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, grant)
}

// list serves GET /v1/jobs/{id}/steps: every step, ended ones included.
func (e stepsEndpoint) list(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := stepJobID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	steps, err := e.srv.jobSteps(caller, id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, steps)
}

// stats serves GET /v1/jobs/{id}/steps/{step}/stats: a running step's
// live figures (sstat).
func (e stepsEndpoint) stats(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := stepJobID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	step, err := strconv.Atoi(r.PathValue("step"))
	if err != nil || step < 0 {
		writeError(w, fault.Errorf(fault.Invalid, "invalid step %q: sstat reads srun's steps (0, 1, ...)", r.PathValue("step")))
		return
	}
	st, err := stepStats(e).collect(r.Context(), caller, id, step)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// cancel serves POST /v1/steps/cancel: {job_id, step_id}.
func (e stepsEndpoint) cancel(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.StepCancelRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	st, err := e.srv.cancelStep(caller, req.JobID, req.StepID)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
