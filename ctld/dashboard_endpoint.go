package ctld

import (
	"net/http"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// dashboardEndpoint serves the dashboard's sign-in to `corral dashboard`
// on the user plane: the caller's identity, from the socket, is what the
// login link signs in as.
type dashboardEndpoint struct{ srv *Server }

// emptyBody reads a request that carries nothing: no body, or an empty
// JSON object, within the route's bound.
func emptyBody(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil
	}
	return decodeBody(r.Body, &struct{}{}, true)
}

// login answers a one-time login link for the caller.
func (e dashboardEndpoint) login(w http.ResponseWriter, r *http.Request, caller peer) {
	if err := emptyBody(r); err != nil {
		writeError(w, err)
		return
	}
	if e.srv.web == nil {
		writeError(w, fault.Errorf(fault.NotFound, "this controller serves no dashboard: start corral-ctld with --web ADDR"))
		return
	}
	writeJSON(w, http.StatusOK, api.DashboardLogin{URL: e.srv.web.dash.LoginURL(caller.UID)})
}

// logoutAll ends the caller's dashboard sessions.
func (e dashboardEndpoint) logoutAll(w http.ResponseWriter, r *http.Request, caller peer) {
	if err := emptyBody(r); err != nil {
		writeError(w, err)
		return
	}
	if e.srv.web == nil {
		writeError(w, fault.Errorf(fault.NotFound, "this controller serves no dashboard: start corral-ctld with --web ADDR"))
		return
	}
	writeJSON(w, http.StatusOK, api.DashboardLogout{Sessions: e.srv.web.dash.LogoutAll(caller.UID)})
}
