package web

import "net/http"

// historyRoutes are the pages of logs and history (logs.go, history.go)
// and the administrators' view (admin.go).
func (d *Dashboard) historyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /jobs/{id}/log", d.signedIn(d.logPage))
	mux.HandleFunc("GET /jobs/{id}/log/follow", d.signedIn(d.logFollow))
	mux.HandleFunc("GET /history", d.signedIn(d.historyPage))
	mux.HandleFunc("GET /admin", d.signedIn(d.adminPage))
	mux.HandleFunc("POST /admin/nodes/{name}/drain", d.signedIn(d.changing(d.nodeAction(false))))
	mux.HandleFunc("POST /admin/nodes/{name}/resume", d.signedIn(d.changing(d.nodeAction(true))))
}
