package ctld

import (
	"net/http"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// userHandler routes the user plane. Every route needs the caller's
// identity, which peerConnContext put in the request context.
func (s *Server) userHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", s.withCaller(s.handleSubmit))
	mux.HandleFunc("GET /v1/jobs", s.withCaller(s.handleListJobs))
	mux.HandleFunc("GET /v1/jobs/{id}", s.withCaller(s.handleGetJob))
	mux.HandleFunc("POST /v1/jobs/cancel", s.withCaller(s.handleCancel))
	mux.HandleFunc("GET /v1/nodes", s.withCaller(s.handleNodes))
	mux.HandleFunc("GET /v1/partitions", s.withCaller(s.handlePartitions))
	mux.HandleFunc("GET /v1/ping", s.withCaller(s.handlePing))
	s.pipelineRoutes(mux)
	s.schedulingRoutes(mux)  // prio.go
	s.environmentRoutes(mux) // environments.go: images, logs, policies, usage
	s.adminRoutes(mux)       // backup.go: state file backup
	s.nodeAdminRoutes(mux)   // drain.go: drain, down and resume
	mux.HandleFunc("/", notFound)
	return s.authorize(mux) // identity, then package authz: rate limit, role, bound
}

type callerHandler func(w http.ResponseWriter, r *http.Request, caller peer)

func (s *Server) withCaller(h callerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, ok := peerFrom(r.Context())
		if !ok {
			writeError(w, fault.Errorf(fault.Forbidden, "cannot tell who is calling: the user plane is served on a Unix socket only"))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxUserBody)
		}
		h(w, r, p)
	}
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.SubmitRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	id, err := s.submit(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.SubmitResponse{JobID: id})
}

// handleListJobs serves GET /v1/jobs?user=&state=&id=&all=1. Values of one
// parameter are ORed (repeated or comma-separated), parameters are ANDed.
// Without state or id, only pending and running jobs are listed unless
// all=1; naming a finished state or a finished job's id lists it.
func (s *Server) handleListJobs(w http.ResponseWriter, r *http.Request, caller peer) {
	q := r.URL.Query()
	view, err := listView(q) // listing.go: view=brief|summary|full, taken out of q
	if err != nil {
		writeError(w, err)
		return
	}
	var f api.JobFilter
	for key, vals := range q {
		if !slices.Contains([]string{"user", "state", "id", "all"}, key) {
			writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user, state, id, all, view)", key))
			return
		}
		for _, v := range splitList(vals) {
			switch key {
			case "user":
				f.Users = append(f.Users, v)
			case "state":
				st, err := api.ParseJobState(v)
				if err != nil {
					writeError(w, fault.Errorf(fault.Invalid, "%v", err))
					return
				}
				f.States = append(f.States, st)
			case "id":
				id, task, err := api.ParseJobRef(v)
				if err != nil {
					writeError(w, fault.Errorf(fault.Invalid, "%v", err))
					return
				}
				if task != nil {
					f.Tasks = append(f.Tasks, api.TaskRef{JobID: id, Task: *task})
				} else {
					f.IDs = append(f.IDs, id)
				}
			case "all":
				switch v {
				case "1", "true", "yes":
					f.All = true
				case "0", "false", "no":
				default:
					writeError(w, fault.Errorf(fault.Invalid, "invalid all=%q: use 1 or 0", v))
					return
				}
			}
		}
	}
	match, includeFinished := jobMatcher(f)
	s.mu.RLock()
	picked, views := s.q.list(f, match, includeFinished)
	s.mu.RUnlock()
	s.writeListing(w, caller, newListing(picked, views, match), view) // listing.go: own jobs unless shared
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

// jobMatcher is which jobs a listing with filter f shows, and whether
// finished ones can be among them.
func jobMatcher(f api.JobFilter) (match func(*api.Job) bool, includeFinished bool) {
	includeFinished = f.All || len(f.IDs)+len(f.Tasks) > 0 || slices.ContainsFunc(f.States, api.JobState.Terminal)
	match = func(j *api.Job) bool {
		if len(f.Users) > 0 && !slices.Contains(f.Users, j.User) {
			return false
		}
		if len(f.States) > 0 && !slices.Contains(f.States, j.State) {
			return false
		}
		if len(f.States) == 0 && !includeFinished && j.State.Terminal() {
			return false
		}
		return true
	}
	return match, includeFinished
}

// list picks the jobs a listing shows, and the array entries (views). The
// caller holds Server.mu (read is enough).
func (q *queue) list(f api.JobFilter, match func(*api.Job) bool, includeFinished bool) (picked []*api.Job, views []api.Job) {
	// Pointers are collected; the jobs are copied a chunk at a time as
	// they are sent: copying, appending and sorting 100,000 api.Job values
	// took seconds and a copy of every job in memory (listing.go).
	switch {
	case len(f.IDs)+len(f.Tasks) > 0:
		for _, id := range f.IDs {
			if j := q.job(id); j != nil && match(&j.rec.Job) {
				picked = append(picked, &j.rec.Job)
			}
		}
	case includeFinished:
		n := len(q.jobs)
		picked = make([]*api.Job, 0, n)
		for _, j := range q.jobs {
			if match(&j.rec.Job) {
				picked = append(picked, &j.rec.Job)
			}
		}
	default:
		n := len(q.active)
		picked = make([]*api.Job, 0, n)
		for _, j := range q.active {
			if match(&j.rec.Job) {
				picked = append(picked, &j.rec.Job)
			}
		}
	}
	return picked, q.appendArrayViews(nil, f, includeFinished, match)
}

func compareIDs(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// handleGetJob serves GET /v1/jobs/{id}: a job by its ID, or an array
// task as 123_4 (a task that has not started is shown as it would run).
func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request, caller peer) {
	id, task, err := api.ParseJobRef(r.PathValue("id"))
	if err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	s.mu.RLock()
	out, msg := s.q.view(jobRef{id: id, task: task})
	s.mu.RUnlock()
	if msg != "" {
		writeError(w, fault.Errorf(fault.NotFound, "%s", msg))
		return
	}
	if !s.gate.MayView(caller.caller(), out.UID) {
		writeError(w, fault.Errorf(fault.Forbidden, "job %s belongs to %s: you may see only your own jobs", r.PathValue("id"), out.User))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.CancelRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.cancel(caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleNodes(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, s.listNodes())
}

func (s *Server) handlePartitions(w http.ResponseWriter, r *http.Request, _ peer) {
	out := append([]api.Partition{}, s.parts.list...)
	writeJSON(w, http.StatusOK, out)
}

// pingResponse is the body of GET /v1/ping: who the controller thinks you are.
type pingResponse struct {
	UID  uint32 `json:"uid"`
	User string `json:"user"`
}

func (s *Server) handlePing(w http.ResponseWriter, r *http.Request, caller peer) {
	writeJSON(w, http.StatusOK, pingResponse{UID: caller.UID, User: s.users.name(caller.UID)})
}
