package ctld

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/images"
)

// imageCallTimeout bounds a pull or import on a node.
const imageCallTimeout = 30 * time.Minute

// environmentRoutes serves images, logs, policies and usage.
func (s *Server) environmentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/images", s.withCaller(s.handleImages))
	mux.HandleFunc("POST /v1/images", s.withCaller(s.handleImageOp))
	mux.HandleFunc("GET /v1/jobs/{id}/log", s.withCaller(s.handleLog))
	mux.HandleFunc("GET /v1/policies", s.withCaller(s.handlePolicies))
	mux.HandleFunc("POST /v1/policies", s.withCaller(s.handleSetPolicy))
	mux.HandleFunc("GET /v1/usage", s.withCaller(s.handleUsage))
}

// addEnvironmentLaunch passes the image and mounts to the node.
func addEnvironmentLaunch(j *job, req *api.LaunchRequest) {
	spec := &j.rec.Job.Spec
	req.Image = spec.ContainerImage
	req.Mounts = spec.Mounts
}

// ---- images ----

// fanOut calls fn for every node at once and returns the answers by node.
func fanOut[T any](clients map[string]*api.NodeClient, fn func(name string, c *api.NodeClient) T) map[string]T {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := make(map[string]T, len(clients))
	for name, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fn(name, c)
			mu.Lock()
			out[name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// handleImages lists every up node's images, one entry per name and
// content, with the nodes holding it.
func (s *Server) handleImages(w http.ResponseWriter, r *http.Request, _ peer) {
	s.mu.RLock()
	clients, err := s.nodes.upClients(nil, nodeCallTimeout)
	s.mu.RUnlock()
	if err != nil {
		writeError(w, err)
		return
	}
	lists := fanOut(clients, func(name string, c *api.NodeClient) []api.Image {
		var list []api.Image
		if err := c.Do(r.Context(), http.MethodGet, "/v1/images", nil, &list); err != nil {
			s.log.Printf("listing the images of node %s: %v", name, err)
		}
		return list
	})
	merged := map[string]*api.Image{}
	for node, list := range lists {
		for _, im := range list {
			k := im.Ref + " " + im.ID
			if merged[k] == nil {
				c := im
				c.Nodes = nil
				merged[k] = &c
			}
			merged[k].Nodes = append(merged[k].Nodes, node)
		}
	}
	out := make([]api.Image, 0, len(merged))
	for _, im := range merged {
		slices.Sort(im.Nodes)
		out = append(out, *im)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Ref < out[j].Ref || out[i].Ref == out[j].Ref && out[i].ID < out[j].ID
	})
	writeJSON(w, http.StatusOK, out)
}

// handleImageOp pulls, imports or removes an image on nodes (root only).
func (s *Server) handleImageOp(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.ImageRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	if !s.gate.IsAdmin(caller.caller()) {
		writeError(w, fault.Errorf(fault.Forbidden, "only an administrator may %s images", req.Op))
		return
	}
	switch req.Op {
	case api.ImagePull, api.ImageRemove:
	case api.ImageImport:
		if !filepath.IsAbs(req.Source) {
			writeError(w, fault.Errorf(fault.Invalid, "import source %q must be an absolute path on the nodes", req.Source))
			return
		}
	default:
		writeError(w, fault.Errorf(fault.Invalid, "unknown image operation %q (pull, import or rm)", req.Op))
		return
	}
	if _, err := images.Canonical(req.Ref); err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	s.mu.RLock()
	clients, err := s.nodes.upClients(req.Nodes, imageCallTimeout)
	s.mu.RUnlock()
	if err != nil {
		writeError(w, err)
		return
	}
	if len(clients) == 0 {
		writeError(w, fault.Errorf(fault.Conflict, "no node is up"))
		return
	}
	nodeReq := api.ImageRequest{Op: req.Op, Ref: req.Ref, Source: req.Source}
	answers := fanOut(clients, func(name string, c *api.NodeClient) api.ImageResult {
		var im api.Image
		if err := c.Do(r.Context(), http.MethodPost, "/v1/images", nodeReq, &im); err != nil {
			var se *api.StatusError
			if errors.As(err, &se) {
				return api.ImageResult{Node: name, Error: se.Message}
			}
			return api.ImageResult{Node: name, Error: err.Error()}
		}
		return api.ImageResult{Node: name, Image: &im}
	})
	out := make([]api.ImageResult, 0, len(answers))
	for _, a := range answers {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	s.log.Printf("image %s %s on %d nodes by uid %d", req.Op, req.Ref, len(out), caller.UID)
	writeJSON(w, http.StatusOK, out)
}

// ---- logs ----

// handleLog serves a piece of a job's stdout or stderr, read on its node
// (owner or admin only). Done is decided before the read, so a reader
// that sees Done has seen everything once it reaches Size.
func (s *Server) handleLog(w http.ResponseWriter, r *http.Request, caller peer) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		writeError(w, fault.Errorf(fault.Invalid, "invalid job id %q", r.PathValue("id")))
		return
	}
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if r.URL.Query().Get("offset") == "" {
		offset, err = 0, nil
	}
	if err != nil || offset < 0 {
		writeError(w, fault.Errorf(fault.Invalid, "invalid offset %q", r.URL.Query().Get("offset")))
		return
	}
	stderr := r.URL.Query().Get("err") == "1"
	s.mu.RLock()
	j := s.q.job(id)
	if j == nil {
		s.mu.RUnlock()
		writeError(w, fault.Errorf(fault.NotFound, "job %d does not exist", id))
		return
	}
	if !s.gate.MayReadLog(caller.caller(), j.rec.Job.UID) {
		s.mu.RUnlock()
		writeError(w, fault.Errorf(fault.Forbidden, "job %d belongs to %s: only its owner or an administrator may read its log", id, j.rec.Job.User))
		return
	}
	out := api.LogChunk{State: j.state(), Done: j.state().Terminal()}
	out.Offset, out.Next = offset, offset
	host := j.batchHost()
	var client *api.NodeClient
	if n := s.nodes.get(host); n != nil {
		client = n.client
	}
	req := api.OutputRequest{Launch: launchRequest(j), Stderr: stderr, Offset: offset}
	s.mu.RUnlock()
	req.Launch.Script = "" // the node needs the patterns, not the script
	out.Node = host
	if host == "" {
		if out.Done {
			writeError(w, fault.Errorf(fault.NotFound, "job %d never ran: it has no log", id))
			return
		}
		writeJSON(w, http.StatusOK, out) // pending: nothing yet
		return
	}
	if client == nil {
		writeError(w, fault.Errorf(fault.NotFound, "job %d ran on node %s, which is no longer known", id, host))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), nodeCallTimeout)
	defer cancel()
	var chunk api.OutputChunk
	if err := client.Do(ctx, http.MethodPost, "/v1/output", req, &chunk); err != nil {
		var se *api.StatusError
		if errors.As(err, &se) {
			if se.Code == http.StatusNotFound && !out.Done {
				writeJSON(w, http.StatusOK, out) // starting: the file is not there yet
				return
			}
			writeError(w, &answered{code: se.Code, msg: se.Message}) // the node's answer, as it gave it
			return
		}
		writeError(w, fault.Errorf(fault.Upstream, "reading job %d's log on node %s: %v", id, host, err))
		return
	}
	out.OutputChunk = chunk
	writeJSON(w, http.StatusOK, out)
}
