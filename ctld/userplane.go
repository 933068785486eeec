package ctld

import (
	"fmt"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/ctld/fault"
)

// userHandler routes the user plane: every route, by the endpoint type
// of the resource it serves. Every route needs the caller's identity,
// which peerConnContext (or a remote credential) put in the request
// context, and passes the gate first.
func userHandler(s *Server) http.Handler {
	jobs, acct, nodes := jobsEndpoint{s}, acctEndpoint{s}, nodesEndpoint{s}
	images, policies, prio := imagesEndpoint{s}, policiesEndpoint{s}, priorityEndpoint{s}
	admin, steps, dash := adminEndpoint{s}, stepsEndpoint{s}, dashboardEndpoint{s}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", withCaller(jobs.submit))
	mux.HandleFunc("POST /v1/jobs/test", withCaller(jobs.testSubmit))
	mux.HandleFunc("GET /v1/jobs", withCaller(jobs.list))
	mux.HandleFunc("GET /v1/jobs/{id}", withCaller(jobs.get))
	mux.HandleFunc("GET /v1/jobs/{id}/wait", withCaller(jobs.wait))
	mux.HandleFunc("GET /v1/jobs/{id}/log", withCaller(jobs.log))
	mux.HandleFunc("POST /v1/jobs/cancel", withCaller(jobs.cancel))
	mux.HandleFunc("POST /v1/jobs/hold", withCaller(jobs.control("hold")))
	mux.HandleFunc("POST /v1/jobs/release", withCaller(jobs.control("release")))
	mux.HandleFunc("POST /v1/jobs/requeue", withCaller(jobs.control("requeue")))
	mux.HandleFunc("POST /v1/jobs/signal", withCaller(jobs.signal))
	mux.HandleFunc("POST /v1/jobs/suspend", withCaller(jobs.control("suspend")))
	mux.HandleFunc("POST /v1/jobs/resume", withCaller(jobs.control("resume")))
	mux.HandleFunc("POST /v1/jobs/update", withCaller(jobs.update))
	mux.HandleFunc("POST /v1/jobs/{id}/allocation", withCaller(jobs.allocation))
	mux.HandleFunc("GET /v1/acct", withCaller(acct.history))
	mux.HandleFunc("GET /v1/usage", withCaller(policies.usage))
	mux.HandleFunc("GET /v1/prio", withCaller(prio.prio))
	mux.HandleFunc("GET /v1/share", withCaller(prio.share))
	mux.HandleFunc("GET /v1/nodes", withCaller(nodes.list))
	mux.HandleFunc("GET /v1/partitions", withCaller(nodes.partitions))
	mux.HandleFunc("GET /v1/config", withCaller(nodes.config))
	mux.HandleFunc("GET /v1/templates", withCaller(nodes.templates))
	mux.HandleFunc("POST /v1/nodes/drain", withCaller(nodes.change(opDrain)))
	mux.HandleFunc("POST /v1/nodes/down", withCaller(nodes.change(opDown)))
	mux.HandleFunc("POST /v1/nodes/resume", withCaller(nodes.change(opResume)))
	mux.HandleFunc("GET /v1/images", withCaller(images.list))
	mux.HandleFunc("POST /v1/images", withCaller(images.op))
	mux.HandleFunc("GET /v1/policies", withCaller(policies.list))
	mux.HandleFunc("POST /v1/policies", withCaller(policies.set))
	mux.HandleFunc("GET "+BackupPath, withCaller(admin.backup))
	mux.HandleFunc("GET /v1/admin/allocation", withCaller(admin.allocation))
	mux.HandleFunc("GET /v1/ping", withCaller(admin.ping))
	mux.HandleFunc("POST /v1/jobs/{id}/steps", withCaller(steps.create))
	mux.HandleFunc("GET /v1/jobs/{id}/steps", withCaller(steps.list))
	mux.HandleFunc("GET /v1/jobs/{id}/steps/{step}/stats", withCaller(steps.stats))
	mux.HandleFunc("POST /v1/steps/cancel", withCaller(steps.cancel))
	mux.HandleFunc("POST /v1/dashboard/login", withCaller(dash.login))
	mux.HandleFunc("POST /v1/dashboard/logout-all", withCaller(dash.logoutAll))
	mux.HandleFunc("/", notFound)
	return gated(s, mux)
}

type callerHandler func(w http.ResponseWriter, r *http.Request, caller peer)

// withCaller hands h the caller the gate admitted.
func withCaller(h callerHandler) http.HandlerFunc {
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

// gated puts the user plane's one gate before mux: identity (set by the
// socket's peer credentials or a verified remote credential), then
// package authz: rate limit, the route's minimum role and its bound.
// Handlers leave the ownership checks to the domain methods they call.
func gated(s *Server, mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := peerFrom(r.Context())
		if !ok {
			writeError(w, fault.Errorf(fault.Unauthenticated, "cannot tell who is calling: use the Unix socket, or send a credential from the local noded (see docs/security.md)"))
			return
		}
		_, pattern := mux.Handler(r)
		if pattern == "/" { // no such route, or wrong method: the mux answers
			pattern = ""
		}
		c, no := s.gate.Admit(p.UID, pattern, w, r, time.Now())
		if no != nil {
			if no.Kind == fault.TooMany {
				w.Header().Set("Retry-After", fmt.Sprint(max(1, (no.Retry+time.Second-1)/time.Second)))
				w.Header().Set("Connection", "close") // a 429 must not keep a descriptor
			}
			writeError(w, fault.Errorf(no.Kind, "%s", no.Msg))
			return
		}
		p.Role = c.Role
		mux.ServeHTTP(w, r.WithContext(withPeer(r.Context(), p)))
	})
}
