package ctld

import "net/http"

// allocation serves GET /v1/admin/allocation: the recent allocation
// samples the admin chart draws (administrators only: the gate).
func (e adminEndpoint) allocation(w http.ResponseWriter, r *http.Request, _ peer) {
	writeJSON(w, http.StatusOK, e.srv.allocHist.history())
}
