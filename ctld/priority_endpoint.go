package ctld

import (
	"net/http"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// priorityEndpoint serves the user-plane views of multifactor priority:
// GET /v1/prio (corral prio, sprio's view of pending jobs' factors) and
// GET /v1/share (corral share, sshare's view of the account tree's usage
// and fairshare).
type priorityEndpoint struct{ srv *Server }

// prio serves GET /v1/prio?user=&id= (repeatable or comma lists).
func (e priorityEndpoint) prio(w http.ResponseWriter, r *http.Request, _ peer) {
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
	writeJSON(w, http.StatusOK, e.srv.prio(f, time.Now()))
}

// share serves GET /v1/share?user=.
func (e priorityEndpoint) share(w http.ResponseWriter, r *http.Request, _ peer) {
	var users []string
	for key, vals := range r.URL.Query() {
		if key != "user" {
			writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user)", key))
			return
		}
		users = append(users, splitList(vals)...)
	}
	writeJSON(w, http.StatusOK, e.srv.share(users, time.Now()))
}
