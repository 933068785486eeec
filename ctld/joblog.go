package ctld

import (
	"context"
	"errors"
	"net/http"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// readLog is a piece of job id's stdout (stderr with stderr set) from
// offset, read on its node: its owner's, and operators' for support.
// Done is decided before the read, so a reader that sees Done has seen
// everything once it reaches Size.
func (s *Server) readLog(ctx context.Context, caller peer, id uint64, offset int64, stderr bool) (api.LogChunk, error) {
	s.mu.RLock()
	j := s.q.job(id)
	if j == nil {
		s.mu.RUnlock()
		return api.LogChunk{}, fault.Errorf(fault.NotFound, "job %d does not exist", id)
	}
	if !s.gate.MayReadLog(caller.caller(), j.rec.Job.UID) {
		s.mu.RUnlock()
		return api.LogChunk{}, fault.Errorf(fault.Forbidden, "job %d belongs to %s: only its owner or an administrator may read its log", id, j.rec.Job.User)
	}
	out := api.LogChunk{State: j.state(), Done: j.state().Terminal()}
	out.Offset, out.Next = offset, offset
	host := j.batchHost()
	client := s.nodes.client(host)
	req := api.OutputRequest{Launch: launchRequest(j), Stderr: stderr, Offset: offset}
	s.mu.RUnlock()
	req.Launch.Script = "" // the node needs the patterns, not the script
	out.Node = host
	if host == "" {
		if out.Done {
			return api.LogChunk{}, fault.Errorf(fault.NotFound, "job %d never ran: it has no log", id)
		}
		return out, nil // pending: nothing yet
	}
	if client == nil {
		return api.LogChunk{}, fault.Errorf(fault.NotFound, "job %d ran on node %s, which is no longer known", id, host)
	}
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	var chunk api.OutputChunk
	if err := client.Do(ctx, http.MethodPost, "/v1/output", req, &chunk); err != nil {
		var se *api.StatusError
		if errors.As(err, &se) {
			if se.Code == http.StatusNotFound && !out.Done {
				return out, nil // starting: the file is not there yet
			}
			return api.LogChunk{}, &answered{code: se.Code, msg: se.Message} // the node's answer, as it gave it
		}
		return api.LogChunk{}, fault.Errorf(fault.Upstream, "reading job %d's log on node %s: %v", id, host, err)
	}
	out.OutputChunk = chunk
	return out, nil
}
