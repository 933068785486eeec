package cli

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/corral-hpc/corral/api"
)

// pipelineFake is the fake controller's side of the pipeline endpoints:
// canned answers, set by a test before it runs the command.
type pipelineFake struct {
	mu sync.Mutex
	// waits are answered in turn to GET /v1/jobs/{id}/wait; the last one
	// repeats.
	waits []api.WaitResponse
	test  *api.TestSubmitResponse
	// control answers hold, release, requeue and update.
	control api.JobsResponse
	acct    []api.AcctRecord
}

func (f *fakeCtld) pipelineRoutes(mux *http.ServeMux) {
	p := &f.pipe
	mux.HandleFunc("GET /v1/jobs/{id}/wait", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.waits) == 0 {
			reply(w, 404, api.Error{Error: "job " + r.PathValue("id") + " does not exist"})
			return
		}
		resp := p.waits[0]
		if len(p.waits) > 1 {
			p.waits = p.waits[1:]
		}
		reply(w, 200, resp)
	})
	mux.HandleFunc("POST /v1/jobs/test", func(w http.ResponseWriter, r *http.Request) {
		var req api.SubmitRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			reply(w, 400, api.Error{Error: err.Error()})
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if f.submitStatus != 0 {
			reply(w, f.submitStatus, api.Error{Error: f.submitError})
			return
		}
		reply(w, 200, p.test)
	})
	control := func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		reply(w, 200, p.control)
	}
	for _, action := range []string{"hold", "release", "requeue", "update", "suspend", "resume"} {
		mux.HandleFunc("POST /v1/jobs/"+action, control)
	}
	mux.HandleFunc("GET /v1/acct", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		reply(w, 200, p.acct)
	})
}

// lastBody decodes the body of the last request sent to path.
func (f *fakeCtld) lastBody(path string, v any) bool {
	reqs := f.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == path {
			return json.Unmarshal(reqs[i].Body, v) == nil
		}
	}
	return false
}
