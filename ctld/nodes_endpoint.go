package ctld

import (
	"net/http"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// nodesEndpoint serves /v1/nodes, /v1/partitions and /v1/config: the
// cluster as `corral nodes` shows it, its configuration, and the
// administrators' drain, down and resume.
type nodesEndpoint struct{ srv *Server }

func (e nodesEndpoint) list(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, e.srv.listNodes())
}

// partitions serves the configured partitions, fixed at start.
func (e nodesEndpoint) partitions(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, append([]api.Partition{}, e.srv.parts.list...))
}

// config serves the controller's configuration, fixed at start; any
// user may read it, as anyone may run scontrol show config.
func (e nodesEndpoint) config(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, e.srv.confView)
}

// templates serves corral.conf's resource templates, fixed at start;
// any user may read them, as the launch dialog offers them to everyone.
func (e nodesEndpoint) templates(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, e.srv.templates)
}

// change serves POST /v1/nodes/{drain,down,resume}.
func (e nodesEndpoint) change(op nodeOp) callerHandler {
	return func(w http.ResponseWriter, r *http.Request, caller peer) {
		var req api.DrainRequest // ResumeRequest is the same without a reason
		if op == opResume {
			var rr api.ResumeRequest
			if err := decodeBody(r.Body, &rr, true); err != nil {
				writeError(w, err)
				return
			}
			req.Nodes = rr.Nodes
		} else if err := decodeBody(r.Body, &req, true); err != nil {
			writeError(w, err)
			return
		}
		resp, err := e.srv.changeNodes(op, req.Nodes, strings.TrimSpace(req.Reason), caller)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}
