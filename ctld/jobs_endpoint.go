package ctld

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// jobsEndpoint serves /v1/jobs: submit, list, show, wait, log, cancel,
// hold, release, requeue, update, and an allocation's renewal and release. Each handler decodes the request,
// calls one domain method (which checks ownership) and encodes the answer.
type jobsEndpoint struct{ srv *Server }

func (e jobsEndpoint) submit(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.SubmitRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	id, err := e.srv.submit(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.SubmitResponse{JobID: id})
}

// allocation serves POST /v1/jobs/{id}/allocation: an allocation's
// client renews or releases it (api.AllocationRequest).
func (e jobsEndpoint) allocation(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := stepJobID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req api.AllocationRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	out, err := e.srv.allocation(r.Context(), caller, id, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// testSubmit serves POST /v1/jobs/test: every check a submit gets, then a
// planning pass with the job added; nothing is stored.
func (e jobsEndpoint) testSubmit(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.SubmitRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := e.srv.testSubmit(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// list serves GET /v1/jobs?user=&state=&id=&all=1&view=&limit=. Values
// of one parameter are ORed (repeated or comma-separated), parameters are
// ANDed. Without state or id, only pending and running jobs are listed
// unless all=1; naming a finished state or a finished job's id lists it.
// With limit=N the answer is a page (api.JobPage): the newest N of each
// state and every state's count.
func (e jobsEndpoint) list(w http.ResponseWriter, r *http.Request, caller peer) {
	q := r.URL.Query()
	view, err := listView(q)
	if err != nil {
		writeError(w, err)
		return
	}
	limit, err := pageLimit(q)
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := jobFilter(q)
	if err != nil {
		writeError(w, err)
		return
	}
	if limit == 0 {
		writeListing(w, e.srv.listJobs(caller, f), view)
		return
	}
	if len(f.IDs)+len(f.Tasks) > 0 {
		writeError(w, fault.Errorf(fault.Invalid, "limit pages a listing by state; it does not combine with id"))
		return
	}
	writePage(w, e.srv.listJobs(caller, f).page(limit), view)
}

// pageLimit reads and removes a listing's limit (0: none).
func pageLimit(q url.Values) (int, error) {
	vals, ok := q["limit"]
	if !ok {
		return 0, nil
	}
	delete(q, "limit")
	if len(vals) == 1 {
		if n, err := strconv.Atoi(vals[0]); err == nil && n >= 1 && n <= api.MaxPageLimit {
			return n, nil
		}
	}
	return 0, fault.Errorf(fault.Invalid, "invalid limit=%q: use a whole number from 1 to %d", strings.Join(vals, ","), api.MaxPageLimit)
}

// jobFilter reads a listing's query.
func jobFilter(q url.Values) (api.JobFilter, error) {
	var f api.JobFilter
	for key, vals := range q {
		if !slices.Contains([]string{"user", "state", "id", "all", "steps", "completing", "ended_since"}, key) {
			return f, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user, state, id, all, steps, completing, ended_since, view, limit)", key)
		}
		if key == "ended_since" {
			t, err := time.Parse(time.RFC3339Nano, vals[len(vals)-1])
			if err != nil {
				return f, fault.Errorf(fault.Invalid, "invalid ended_since=%q: use an RFC 3339 time", vals[len(vals)-1])
			}
			f.EndedSince = t
			continue
		}
		for _, v := range splitList(vals) {
			switch key {
			case "user":
				f.Users = append(f.Users, v)
			case "state":
				st, err := api.ParseJobState(v)
				if err != nil {
					return f, fault.Errorf(fault.Invalid, "%v", err)
				}
				f.States = append(f.States, st)
			case "id":
				id, task, err := api.ParseJobRef(v)
				if err != nil {
					return f, fault.Errorf(fault.Invalid, "%v", err)
				}
				if task != nil {
					f.Tasks = append(f.Tasks, api.TaskRef{JobID: id, Task: *task})
				} else {
					f.IDs = append(f.IDs, id)
				}
			case "all", "steps", "completing":
				on, err := queryBool(key, v)
				if err != nil {
					return f, err
				}
				switch key {
				case "all":
					f.All = f.All || on
				case "steps":
					f.WithSteps = f.WithSteps || on
				default:
					f.Completing = f.Completing || on
				}
			}
		}
	}
	if f.WithSteps && (f.All || len(f.States) > 0 || f.Completing) {
		return f, fault.Errorf(fault.Invalid, "steps=1 lists the jobs whose steps run; it does not combine with state, all or completing")
	}
	return f, nil
}

// queryBool reads a yes-or-no query parameter.
func queryBool(key, v string) (bool, error) {
	switch v {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, fault.Errorf(fault.Invalid, "invalid %s=%q: use 1 or 0", key, v)
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// pathRef is the job the path's {id} names: 123, or an array task 123_4.
func pathRef(r *http.Request) (jobRef, error) {
	id, task, err := api.ParseJobRef(r.PathValue("id"))
	if err != nil {
		return jobRef{}, fault.Errorf(fault.Invalid, "%v", err)
	}
	return jobRef{id: id, task: task}, nil
}

// get serves GET /v1/jobs/{id}.
func (e jobsEndpoint) get(w http.ResponseWriter, r *http.Request, caller peer) {
	ref, err := pathRef(r)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := e.srv.jobView(caller, ref)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// wait serves GET /v1/jobs/{id}/wait?timeout_s=N, a long poll.
func (e jobsEndpoint) wait(w http.ResponseWriter, r *http.Request, caller peer) {
	ref, err := pathRef(r)
	if err != nil {
		writeError(w, err)
		return
	}
	timeout := defaultWaitTimeout
	if v := r.URL.Query().Get("timeout_s"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, fault.Errorf(fault.Invalid, "invalid timeout_s=%q: use whole seconds", v))
			return
		}
		timeout = min(time.Duration(n)*time.Second, maxWaitTimeout)
	}
	resp, err := e.srv.wait(r.Context(), caller, ref, timeout)
	switch {
	case r.Context().Err() != nil: // the client is gone
	case err != nil:
		writeError(w, err)
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// log serves GET /v1/jobs/{id}/log?offset=N&err=1: a piece of a job's
// stdout or stderr, read on its node.
func (e jobsEndpoint) log(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		writeError(w, fault.Errorf(fault.Invalid, "invalid job id %q", r.PathValue("id")))
		return
	}
	raw := r.URL.Query().Get("offset")
	var offset int64
	if raw != "" {
		if offset, err = strconv.ParseInt(raw, 10, 64); err != nil || offset < 0 {
			writeError(w, fault.Errorf(fault.Invalid, "invalid offset %q", raw))
			return
		}
	}
	out, err := e.srv.readLog(r.Context(), caller, id, offset, r.URL.Query().Get("err") == "1")
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (e jobsEndpoint) cancel(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.CancelRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := e.srv.cancel(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// control serves hold, release and requeue, and suspend and resume.
func (e jobsEndpoint) control(action string) callerHandler {
	do := e.srv.control
	if action == "suspend" || action == "resume" {
		do = e.srv.suspendJobs
	}
	return func(w http.ResponseWriter, r *http.Request, caller peer) {
		var req api.JobsRequest
		if err := decodeBody(r.Body, &req, true); err != nil {
			writeError(w, err)
			return
		}
		resp, err := do(caller, action, req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

func (e jobsEndpoint) update(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.UpdateRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := e.srv.update(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// jobView is how much of each job a listing sends (GET /v1/jobs?view=):
//   - full (the default): the whole api.Job;
//   - summary: every field but the spec (script, environment) and the
//     history, which are most of a record's bytes; what `corral queue
//     --json` prints (`corral show job --json` has everything);
//   - brief: only what the `corral queue` table shows (api.JobBrief), about a
//     fifth of the bytes, so the commonest big listing is cheap.
type jobView int

const (
	viewFull jobView = iota
	viewSummary
	viewBrief
)

// ViewBrief and ViewSummary are the view parameter's values.
const (
	ViewBrief   = "brief"
	ViewSummary = "summary"
)

// listView reads and removes the view parameter.
func listView(q url.Values) (jobView, error) {
	vals, ok := q["view"]
	if !ok {
		return viewFull, nil
	}
	delete(q, "view")
	if len(vals) == 1 {
		switch vals[0] {
		case ViewBrief:
			return viewBrief, nil
		case ViewSummary:
			return viewSummary, nil
		case "full":
			return viewFull, nil
		}
	}
	return viewFull, fault.Errorf(fault.Invalid, "invalid view=%q: use brief, summary or full", strings.Join(vals, ","))
}

// summaryJob is api.Job without its spec and history: the outer fields
// shadow the embedded ones and, nil, are left out.
type summaryJob struct {
	*api.Job
	Spec    *struct{} `json:"spec,omitempty"`
	History *struct{} `json:"history,omitempty"`
}

// writeListing sends l as a JSON array of api.Job (or of api.JobBrief),
// a chunk at a time as the listing hands them out.
func writeListing(w http.ResponseWriter, l *listing, view jobView) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	bw.WriteByte('[')
	first := true
	for !l.done() {
		for _, j := range l.next() {
			if !first {
				bw.WriteByte(',')
			}
			first = false
			if enc.Encode(viewOf(j, view)) != nil { // an api value always encodes: the client is gone
				return
			}
		}
	}
	bw.WriteString("]\n")
	bw.Flush()
}

// viewOf is what a listing in view sends of j.
func viewOf(j *api.Job, view jobView) any {
	switch view {
	case viewBrief:
		b := api.BriefOf(j)
		return &b
	case viewSummary:
		return summaryJob{Job: j}
	}
	return j
}

// writePage sends p (api.JobPage) with its jobs in view.
func writePage(w http.ResponseWriter, p api.JobPage, view jobView) {
	out := struct {
		Jobs   []any                `json:"jobs"`
		Counts map[api.JobState]int `json:"counts"`
	}{Jobs: make([]any, len(p.Jobs)), Counts: p.Counts}
	for i := range p.Jobs {
		out.Jobs[i] = viewOf(&p.Jobs[i], view)
	}
	writeJSON(w, http.StatusOK, out)
}

func (e jobsEndpoint) signal(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.SignalJobsRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := e.srv.signalJobs(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
