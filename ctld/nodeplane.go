package ctld

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// nodeHandler routes the node plane. Every request must carry a valid
// signature (api.Verify) over its exact body; anything else is answered
// 401 before any handler runs.
func nodeHandler(s *Server) http.Handler {
	nodes := nodePlaneEndpoint{s}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/node/register", nodes.register)
	mux.HandleFunc("POST /v1/node/events", nodes.events)
	mux.HandleFunc("POST /v1/node/cert", s.tls.handleNodeCert)
	mux.HandleFunc("/", notFound)
	return verified(s.key, mux)
}

// verified reads the body (bounded), checks the signature with key and
// hands the handler a fresh reader over the verified bytes.
func verified(key []byte, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNodeBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, fault.Errorf(fault.TooLarge, "request body is larger than %d MiB", maxNodeBody>>20))
				return
			}
			writeError(w, fault.Errorf(fault.Invalid, "reading request body: %v", err))
			return
		}
		if err := api.Verify(r, key, body, time.Now()); err != nil {
			writeError(w, fault.Errorf(fault.Unauthenticated, "node plane: %v", err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// nodePlaneEndpoint serves the node daemons: registration and job
// events. Node-plane bodies are decoded leniently (unknown fields
// ignored) so nodes and controller can be upgraded one at a time.
type nodePlaneEndpoint struct{ srv *Server }

func (e nodePlaneEndpoint) register(w http.ResponseWriter, r *http.Request) {
	var req api.RegisterRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if err := checkRegister(&req); err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	resp, err := e.srv.register(req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (e nodePlaneEndpoint) events(w http.ResponseWriter, r *http.Request) {
	var req api.EventsRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if err := e.srv.applyEvents(req.Events); err != nil {
		// 500: the node keeps the events and sends them again.
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
