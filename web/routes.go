package web

import "net/http"

// historyRoutes are the pages of logs and history (logs.go, history.go)
// and the administrators' view (admin.go).
func (d *Dashboard) historyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /jobs/{id}/log", d.signedIn(d.logPage))
	mux.HandleFunc("GET /jobs/{id}/log/follow", d.signedIn(d.logFollow))
	mux.HandleFunc("GET /history", d.signedIn(d.historyPage))
}
