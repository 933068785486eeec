package noded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/corral-hpc/corral/api"
)

// maxBody bounds a node-plane request (a launch carries a whole script).
const maxBody = api.MaxLaunchBytes

// handler routes the node plane. Every route is ctld's, signed with the
// cluster key, except srun's step launch: srun holds no key, and the
// step credential in its body, which ctld signed, is its authority.
func (d *Daemon) handler() http.Handler {
	signed := http.NewServeMux()
	signed.HandleFunc("POST /v1/launch", d.handleLaunch)
	signed.HandleFunc("POST /v1/signal", d.handleSignal)
	signed.HandleFunc("POST /v1/jobs/signal", d.handleJobSignal)
	signed.HandleFunc("POST /v1/jobs/suspend", d.handleSuspend)
	signed.HandleFunc("GET /v1/jobs", d.handleJobs)
	signed.HandleFunc("GET /v1/images", d.handleImages)
	signed.HandleFunc("POST /v1/images", d.handleImageOp)
	signed.HandleFunc("POST /v1/output", d.handleOutput)
	signed.HandleFunc("GET /v1/steps", d.handleSteps)
	signed.HandleFunc("POST /v1/steps/cancel", d.handleStepCancel)
	signed.HandleFunc("POST /v1/steps/stats", d.handleStepStats)
	signed.HandleFunc("POST "+api.AppTunnelPath, d.handleAppTunnel) // apptunnel.go
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/steps", d.handleStepLaunch)
	mux.Handle("/", d.authenticate(signed))
	return mux
}

// authenticate reads the body (bounded) and checks its signature before
// anything else sees the request: a bad one gets 401 and changes nothing.
func (d *Daemon) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if err := api.Verify(r, d.cfg.Key, body, time.Now()); err != nil {
			writeError(w, http.StatusUnauthorized, "node plane: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request's body, at most maxBody bytes; it answers a
// longer one with 413 and false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the request: "+err.Error())
		return nil, false
	}
	if len(body) > maxBody {
		// A launch this large is the job's script and environment:
		// the job's fault, never a reason to take the node down.
		var kind api.ErrorKind
		if r.URL.Path == "/v1/launch" {
			kind = api.KindJobRefused
		}
		writeJSON(w, http.StatusRequestEntityTooLarge, api.Error{Error: fmt.Sprintf("request body over %d bytes", maxBody), Kind: kind})
		return nil, false
	}
	return body, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, api.Error{Error: msg})
}

// decode reads one JSON object and rejects unknown fields and trailing data.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad request body: %v", err)
	}
	if dec.More() {
		return errors.New("bad request body: more than one JSON value")
	}
	return nil
}

func (d *Daemon) handleLaunch(w http.ResponseWriter, r *http.Request) {
	var req api.LaunchRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := d.launch(&req); err != nil {
		var le *launchError
		if errors.As(err, &le) {
			writeJSON(w, le.code, api.Error{Error: le.msg, Kind: le.kind})
			return
		}
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (d *Daemon) handleSignal(w http.ResponseWriter, r *http.Request) {
	var req api.SignalRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d.cancel(req.JobID, "cancelled by ctld")
	writeJSON(w, http.StatusOK, struct{}{})
}

func (d *Daemon) handleJobs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.runningJobs())
}
