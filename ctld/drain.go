package ctld

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
)

// Draining takes a node out of service without touching what runs there:
// the planner stops placing jobs on it (it is not Up in the snapshot),
// its running jobs finish, and it comes back only when resumed. The
// reason and time are kept in the node's record, so a drain survives
// controller restarts and node re-registrations.

// maxDrainReason bounds a drain's reason, which every `corral nodes` shows.
const maxDrainReason = 256

func (s *Server) nodeAdminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/nodes/drain", s.withCaller(s.handleDrain))
	mux.HandleFunc("POST /v1/nodes/resume", s.withCaller(s.handleResume))
}

func (s *Server) handleDrain(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.DrainRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	reason := strings.TrimSpace(req.Reason)
	switch {
	case reason == "":
		writeError(w, errorf(http.StatusBadRequest, "a drain needs a reason (it is shown with the node)"))
		return
	case len(reason) > maxDrainReason || strings.ContainsAny(reason, "\n\r\x00"):
		writeError(w, errorf(http.StatusBadRequest, "the reason must be one line of at most %d bytes", maxDrainReason))
		return
	}
	resp, err := s.setDrain(req.Nodes, reason, caller)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleResume(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.ResumeRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.setDrain(req.Nodes, "", caller)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// setDrain drains the named nodes (reason set) or resumes them (reason
// ""), all or none: an unknown node refuses the whole request. It returns
// the nodes whose state changed.
func (s *Server) setDrain(exprs []string, reason string, caller peer) (api.NodesResponse, error) {
	verb := "drain"
	if reason == "" {
		verb = "resume"
	}
	if !s.isAdmin(caller) {
		return api.NodesResponse{}, errorf(http.StatusForbidden, "%s: only administrators may change nodes", verb)
	}
	var names []string
	for _, e := range exprs {
		ns, err := hostlist.Expand(e)
		if err != nil {
			return api.NodesResponse{}, errorf(http.StatusBadRequest, "%s: %v", verb, err)
		}
		names = append(names, ns...)
	}
	hostlist.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return api.NodesResponse{}, errorf(http.StatusBadRequest, "%s: name at least one node", verb)
	}
	now := time.Now()
	s.mu.Lock()
	var unknown []string
	for _, name := range names {
		if s.nodes[name] == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		s.mu.Unlock()
		return api.NodesResponse{}, errorf(http.StatusNotFound, "%s: no node %s (nothing changed)", verb, strings.Join(unknown, ", "))
	}
	resp := api.NodesResponse{Nodes: []string{}}
	var recs []store.NodeRecord
	for _, name := range names {
		n := s.nodes[name]
		if n.rec.Drain == reason {
			continue // already so
		}
		rec := n.rec
		rec.Drain, rec.DrainedSince = reason, time.Time{}
		if reason != "" {
			rec.DrainedSince = now
			if n.rec.Drain != "" { // a new reason keeps the time it began
				rec.DrainedSince = n.rec.DrainedSince
			}
		}
		recs = append(recs, rec)
		resp.Nodes = append(resp.Nodes, name)
	}
	if len(recs) > 0 {
		if err := s.store.PutNodes(recs...); err != nil { // one commit for all
			s.mu.Unlock()
			return api.NodesResponse{}, fmt.Errorf("%s: %w", verb, err)
		}
	}
	for _, rec := range recs {
		s.nodes[rec.Name].rec = rec
	}
	s.mu.Unlock()
	if len(resp.Nodes) > 0 {
		s.log.Printf("%s nodes %s by uid %d%s", verb, strings.Join(resp.Nodes, ","), caller.UID,
			suffixIf(": "+reason, reason != ""))
		s.Kick() // a resumed node may start jobs now
	}
	return resp, nil
}
