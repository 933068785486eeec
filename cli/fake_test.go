package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// fakeCtld serves the user API on a Unix socket with canned answers and
// records every request, so tests can check what the CLI sent (and that
// it sent nothing on bad input).
type fakeCtld struct {
	socket string

	mu       sync.Mutex
	requests []recorded
	jobs     []api.Job
	nodes    []api.Node
	parts    []api.Partition // GET /v1/partitions
	// steps are GET /v1/jobs/{id}/steps's answers; a job without is 404.
	steps  map[uint64][]api.Step
	nextID uint64
	// submitStatus, if non-zero, rejects submits with that status and
	// submitError as the message.
	submitStatus int
	submitError  string
	// pipe holds the answers of the pipeline endpoints (pipeline_fake_test.go).
	pipe pipelineFake
	// prio and share answer GET /v1/prio and /v1/share (prio_test.go).
	prio  api.PrioResponse
	share api.ShareResponse
}

type recorded struct {
	Method string
	Path   string
	Query  url.Values
	Body   []byte
}

// MustFakeCtld starts a fake controller that lives as long as the test.
func MustFakeCtld(t *testing.T) *fakeCtld {
	t.Helper()
	f := &fakeCtld{socket: filepath.Join(t.TempDir(), "ctld.sock"), nextID: 7}
	ln, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/ping", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"uid": 0, "user": "root"})
	})
	mux.HandleFunc("POST /v1/jobs", f.submit)
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		// In ID order, as ctld lists (queuefast.go relies on it).
		jobs := slices.Clone(f.jobs)
		slices.SortFunc(jobs, func(a, b api.Job) int { return cmp.Compare(a.ID, b.ID) })
		if v := r.URL.Query().Get("ended_since"); v != "" { // as ctld: finished before it, left out
			since, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				reply(w, 400, api.Error{Error: "invalid ended_since"})
				return
			}
			jobs = slices.DeleteFunc(jobs, func(j api.Job) bool {
				return j.State.Terminal() && !j.Completing && j.EndTime != nil && j.EndTime.Before(since)
			})
		}
		if ids := r.URL.Query()["id"]; len(ids) > 0 { // plain job IDs, as ctld filters them: an array's, all its tasks
			jobs = slices.DeleteFunc(jobs, func(j api.Job) bool {
				return !slices.Contains(ids, strconv.FormatUint(j.ID, 10)) && !slices.Contains(ids, strconv.FormatUint(j.ArrayJobID, 10))
			})
		}
		reply(w, 200, jobs)
	})
	mux.HandleFunc("GET /v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if j := f.job(id); j != nil {
			reply(w, 200, j)
			return
		}
		reply(w, 404, api.Error{Error: fmt.Sprintf("job %s does not exist", r.PathValue("id"))})
	})
	mux.HandleFunc("POST /v1/jobs/cancel", f.cancel)
	mux.HandleFunc("POST /v1/steps/cancel", f.cancelStep)
	mux.HandleFunc("POST /v1/jobs/signal", f.signal)
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, 200, f.nodes)
	})
	mux.HandleFunc("GET /v1/partitions", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, 200, f.parts)
	})
	mux.HandleFunc("GET /v1/jobs/{id}/steps", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseUint(r.PathValue("id"), 10, 64)
		f.mu.Lock()
		defer f.mu.Unlock()
		if steps, ok := f.steps[id]; ok {
			reply(w, 200, steps)
			return
		}
		reply(w, 404, api.Error{Error: "job not found"})
	})
	// A step's figures: one task on dev1, with step+1 MB at its peak.
	mux.HandleFunc("GET /v1/jobs/{id}/steps/{step}/stats", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseUint(r.PathValue("id"), 10, 64)
		step, _ := strconv.Atoi(r.PathValue("step"))
		reply(w, 200, api.StepStats{JobID: id, StepID: step, Nodes: []string{"dev1"},
			Tasks: []api.TaskStats{{Rank: 0, Node: "dev1", MaxRSSBytes: int64(step+1) << 20}}})
	})
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, api.ClusterConfig{Loaded: time.Date(2026, 3, 4, 10, 0, 0, 0, time.Local),
			Entries: []api.ConfigEntry{{Key: "ClusterName", Value: "corral"}, {Key: "SlurmctldHost[0]", Value: "head"}}})
	})
	f.pipelineRoutes(mux)
	f.schedulingRoutes(mux) // prio_test.go
	f.nodeAdminRoutes(mux)  // nodes_test.go
	srv := &http.Server{Handler: f.record(mux)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakeCtld) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.Query(), body})
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (f *fakeCtld) submit(w http.ResponseWriter, r *http.Request) {
	var req api.SubmitRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		reply(w, 400, api.Error{Error: "bad body: " + err.Error()})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitStatus != 0 {
		reply(w, f.submitStatus, api.Error{Error: f.submitError})
		return
	}
	reply(w, 200, api.SubmitResponse{JobID: f.nextID})
}

// cancelStep cancels steps 0-8 of a known job; others are not running.
func (f *fakeCtld) cancelStep(w http.ResponseWriter, r *http.Request) {
	var req api.StepCancelRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(w, 400, api.Error{Error: "bad body: " + err.Error()})
		return
	}
	if f.job(req.JobID) == nil || req.StepID > 8 {
		reply(w, 404, api.Error{Error: fmt.Sprintf("step %d.%d is not running", req.JobID, req.StepID)})
		return
	}
	reply(w, 200, api.Step{JobID: req.JobID, StepID: req.StepID, State: api.StateRunning})
}

// signal signals the known jobs; step 9 of any job is not running.
func (f *fakeCtld) signal(w http.ResponseWriter, r *http.Request) {
	var req api.SignalJobsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(w, 400, api.Error{Error: err.Error()})
		return
	}
	resp := api.JobsResponse{Done: []string{}, Errors: map[string]string{}}
	for _, id := range req.IDs {
		ref := strconv.FormatUint(id, 10)
		switch {
		case f.job(id) == nil:
			resp.Errors[ref] = fmt.Sprintf("job %d does not exist", id)
		case req.Step != nil && *req.Step == 9:
			resp.Errors[ref] = fmt.Sprintf("step %d.9 is not running", id)
		default:
			resp.Done = append(resp.Done, ref)
		}
	}
	resp.ErrorCount = len(resp.Errors)
	reply(w, 200, resp)
}

func (f *fakeCtld) cancel(w http.ResponseWriter, r *http.Request) {
	var req api.CancelRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(w, 400, api.Error{Error: err.Error()})
		return
	}
	resp := api.CancelResponse{Cancelled: []uint64{}, Errors: map[uint64]string{}}
	for _, id := range req.IDs {
		switch j := f.job(id); {
		case j == nil:
			resp.Errors[id] = fmt.Sprintf("job %d does not exist", id)
			resp.Gone = append(resp.Gone, id)
		case j.State.Terminal():
			resp.Errors[id] = fmt.Sprintf("job %d already finished (%s)", id, j.State)
			resp.Gone = append(resp.Gone, id)
		case j.User == "carol": // another user's job, as the controller refuses it
			resp.Errors[id] = fmt.Sprintf("job %d belongs to carol", id)
		default:
			resp.Cancelled = append(resp.Cancelled, id)
		}
	}
	resp.ErrorCount, resp.GoneCount = len(resp.Errors), len(resp.Gone)
	reply(w, 200, resp)
}

func (f *fakeCtld) job(id uint64) *api.Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.jobs {
		if f.jobs[i].ID == id {
			j := f.jobs[i]
			return &j
		}
	}
	return nil
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Requests returns what the CLI sent so far.
func (f *fakeCtld) Requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// MustOneRequest returns the only request sent, failing otherwise.
func (f *fakeCtld) MustOneRequest(t *testing.T) recorded {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("controller got %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// result is one run of the command line.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs corral with args (without the program name), stdin as given.
func runCLI(stdin string, args ...string) result {
	app := App()
	var o, e bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &o, &e, strings.NewReader(stdin)
	code := Run(context.Background(), app, append([]string{"corral"}, args...))
	return result{o.String(), e.String(), code}
}

// run runs corral against this fake controller.
func (f *fakeCtld) run(args ...string) result {
	return runCLI("", append([]string{"--socket", f.socket}, args...)...)
}

// mustFail checks a run ended with exactly one error line and code.
func mustFail(t *testing.T, r result, code int, line string) {
	t.Helper()
	if r.code != code || r.stderr != line+"\n" {
		t.Errorf("got exit %d, stderr %q; want exit %d, stderr %q", r.code, r.stderr, code, line+"\n")
	}
}
