package ctld

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/priority"
)

// The user-plane views of multifactor priority: GET /v1/prio (corral prio,
// sprio's view of pending jobs' factors) and GET /v1/share (corral share,
// sshare's view of the account tree's usage and fairshare).

// schedulingRoutes adds the priority endpoints to the user plane.
func (s *Server) schedulingRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/prio", s.withCaller(s.handlePrio))
	mux.HandleFunc("GET /v1/share", s.withCaller(s.handleShare))
}

// handlePrio serves GET /v1/prio?user=&id= (repeatable or comma lists).
func (s *Server) handlePrio(w http.ResponseWriter, r *http.Request, _ peer) {
	var f api.PrioFilter
	for key, vals := range r.URL.Query() {
		for _, v := range splitList(vals) {
			switch key {
			case "user":
				f.Users = append(f.Users, v)
			case "id":
				id, err := strconv.ParseUint(v, 10, 64)
				if err != nil || id == 0 {
					writeError(w, fault.Errorf(fault.Invalid, "invalid job id %q: use a positive number", v))
					return
				}
				f.IDs = append(f.IDs, id)
			default:
				writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user, id)", key))
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, s.prio(f, time.Now()))
}

// prio computes every matching pending job's priority afresh at now.
func (s *Server) prio(filter api.PrioFilter, now time.Time) api.PrioResponse {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fs.Prio(s.q.pendingEntries(), s.nodes.size(), filter, now)
}

func (s *Server) handleShare(w http.ResponseWriter, r *http.Request, _ peer) {
	var users []string
	for key, vals := range r.URL.Query() {
		if key != "user" {
			writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user)", key))
			return
		}
		users = append(users, splitList(vals)...)
	}
	writeJSON(w, http.StatusOK, s.share(users, time.Now()))
}

// share builds sshare's view of the tree at now: every configured
// account and user, and every user with usage or a pending job.
func (s *Server) share(users []string, now time.Time) api.ShareResponse {
	s.mu.RLock()
	var owners []priority.Job
	for _, e := range s.q.pendingEntries() {
		owners = append(owners, priority.Job{User: e.Job.User, Account: e.Job.Spec.Account})
	}
	s.mu.RUnlock()
	return s.fs.Share(owners, users, now)
}

// pendingEntries lists pending jobs and array remainders. s.mu is
// held (read is enough).
func (q *queue) pendingEntries() []fairshare.Pending {
	var out []fairshare.Pending
	for _, j := range q.unfinished() {
		if j.state() == api.StatePending {
			out = append(out, fairshare.Pending{View: j.rec.Job, Job: &j.rec.Job})
		}
	}
	for _, a := range q.eachArray() {
		if r := a.pendingRem(); r != nil && a.remCount > 0 {
			out = append(out, fairshare.Pending{View: remView(a), Job: r})
		}
	}
	slices.SortFunc(out, func(a, b fairshare.Pending) int { return cmp.Compare(a.View.ID, b.View.ID) })
	return out
}
