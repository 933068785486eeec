package ctld

import (
	"net/http"

	"github.com/corral-hpc/corral/api"
)

// policiesEndpoint serves /v1/policies, the resource policies, and
// /v1/usage, what users run against them.
type policiesEndpoint struct{ srv *Server }

func (e policiesEndpoint) list(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, e.srv.policies.List())
}

func (e policiesEndpoint) set(w http.ResponseWriter, r *http.Request, caller peer) {
	var p api.Policy
	if err := decodeBody(r.Body, &p, true); err != nil {
		writeError(w, err)
		return
	}
	if err := e.srv.setPolicy(caller, p); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// usage serves GET /v1/usage[?user=NAME|all=1].
func (e policiesEndpoint) usage(w http.ResponseWriter, r *http.Request, caller peer) {
	out, err := e.srv.usageFor(caller, r.URL.Query().Get("user"), r.URL.Query().Get("all") == "1")
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
