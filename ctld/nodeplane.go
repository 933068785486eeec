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
func (s *Server) nodeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/node/register", s.handleRegister)
	mux.HandleFunc("POST /v1/node/events", s.handleEvents)
	mux.HandleFunc("POST /v1/node/cert", s.tls.handleNodeCert)
	mux.HandleFunc("/", notFound)
	return s.verified(mux)
}

// verified reads the body (bounded), checks the signature and hands the
// handler a fresh reader over the verified bytes.
func (s *Server) verified(next http.Handler) http.Handler {
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
		if err := api.Verify(r, s.key, body, time.Now()); err != nil {
			writeError(w, fault.Errorf(fault.Unauthenticated, "node plane: %v", err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// Node-plane bodies are decoded leniently (unknown fields ignored) so
// nodes and controller can be upgraded one at a time.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var req api.RegisterRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if err := checkRegister(&req); err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	resp, err := s.register(req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	var req api.EventsRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if err := s.applyEvents(req.Events); err != nil {
		// 500: the node keeps the events and sends them again.
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
