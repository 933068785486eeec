package ctld

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/images"
)

// Container images live on the nodes; the controller asks every up node
// at once and merges their answers.

// imageCallTimeout bounds a pull or import on a node.
const imageCallTimeout = 30 * time.Minute

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

// images lists every up node's images, one entry per name and content,
// with the nodes holding it.
func (s *Server) images(ctx context.Context) ([]api.Image, error) {
	s.mu.RLock()
	clients, err := s.nodes.upClients(nil, nodeCallTimeout)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	lists := fanOut(clients, func(name string, c *api.NodeClient) []api.Image {
		var list []api.Image
		if err := c.Do(ctx, http.MethodGet, "/v1/images", nil, &list); err != nil {
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
	return out, nil
}

// imageOp pulls, imports or removes an image on nodes (admins only),
// and answers per node.
func (s *Server) imageOp(ctx context.Context, caller peer, req api.ImageRequest) ([]api.ImageResult, error) {
	if !s.gate.IsAdmin(caller.caller()) {
		return nil, fault.Errorf(fault.Forbidden, "only an administrator may %s images", req.Op)
	}
	switch req.Op {
	case api.ImagePull, api.ImageRemove:
	case api.ImageImport:
		if !filepath.IsAbs(req.Source) {
			return nil, fault.Errorf(fault.Invalid, "import source %q must be an absolute path on the nodes", req.Source)
		}
	default:
		return nil, fault.Errorf(fault.Invalid, "unknown image operation %q (pull, import or rm)", req.Op)
	}
	if _, err := images.Canonical(req.Ref); err != nil {
		return nil, fault.Errorf(fault.Invalid, "%v", err)
	}
	s.mu.RLock()
	clients, err := s.nodes.upClients(req.Nodes, imageCallTimeout)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if len(clients) == 0 {
		return nil, fault.Errorf(fault.Conflict, "no node is up")
	}
	nodeReq := api.ImageRequest{Op: req.Op, Ref: req.Ref, Source: req.Source}
	answers := fanOut(clients, func(name string, c *api.NodeClient) api.ImageResult {
		var im api.Image
		if err := c.Do(ctx, http.MethodPost, "/v1/images", nodeReq, &im); err != nil {
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
	return out, nil
}
