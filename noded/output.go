package noded

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
	"golang.org/x/sys/unix"
)

// MaxOutputChunk bounds one read of a job's output.
const MaxOutputChunk = 1 << 20

// handleOutput returns part of a job's stdout or stderr. The file is
// opened as the job's user under the rules the job's own files were
// opened by (shim.OpenForReading): a final symlink is followed only if
// the user or root owns it, and only a regular file (or /dev/null) is
// read, never waited on. So a user reads nothing they could not read
// themselves, and a link or FIFO another user planted is refused.
func (d *Daemon) handleOutput(w http.ResponseWriter, r *http.Request) {
	var req api.OutputRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	chunk, code, err := readOutput(&req, d.cfg.Name)
	if err != nil {
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, chunk)
}

func readOutput(req *api.OutputRequest, node string) (*api.OutputChunk, int, error) {
	l := &req.Launch
	if l.JobID == 0 || l.WorkDir == "" {
		return nil, http.StatusBadRequest, errors.New("output: the request names no job")
	}
	if req.Offset < 0 {
		return nil, http.StatusBadRequest, errors.New("output: negative offset")
	}
	limit := req.Limit
	if limit <= 0 || limit > MaxOutputChunk {
		limit = MaxOutputChunk
	}
	stdout, stderr := shim.OutputPaths(l, node)
	path := stdout
	if req.Stderr {
		path = stderr
	}
	chunk := &api.OutputChunk{Path: path, Offset: req.Offset, Next: req.Offset}
	id := shim.Identity{UID: l.UID, GID: l.GID, Groups: l.Groups}
	err := shim.AsUser(id, func() error {
		f, err := shim.OpenForReading(path, l.UID)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		chunk.Size = st.Size()
		if req.Offset >= st.Size() {
			return nil
		}
		buf := make([]byte, min(limit, st.Size()-req.Offset))
		n, err := f.ReadAt(buf, req.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		chunk.Data = buf[:n]
		chunk.Next = req.Offset + int64(n)
		return nil
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, http.StatusNotFound, fmt.Errorf("job %d's output %s is not on node %s", l.JobID, path, node)
	case errors.Is(err, shim.ErrRefused), errors.Is(err, unix.ELOOP):
		return nil, http.StatusForbidden, fmt.Errorf("job %d's output %s: %v", l.JobID, path, err)
	case err != nil:
		return nil, http.StatusForbidden, fmt.Errorf("job %d's output on node %s: %v", l.JobID, node, err)
	}
	return chunk, http.StatusOK, nil
}
