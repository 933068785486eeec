package ctld

import (
	"io"
	"net/http"
	"strconv"
)

// adminEndpoint serves the controller itself: who it thinks the caller
// is (ping) and a copy of its state file (backup).
type adminEndpoint struct{ srv *Server }

// BackupBytesTrailer carries the copy's length after its last byte: a
// client that read fewer bytes, or no trailer, holds a truncated copy.
const BackupBytesTrailer = "Corral-Backup-Bytes"

// backup serves GET /v1/admin/backup: the state file, streamed.
func (e adminEndpoint) backup(w http.ResponseWriter, r *http.Request, caller peer) {
	started := false
	n, err := e.srv.backup(caller, func() io.Writer {
		started = true
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Trailer", BackupBytesTrailer)
		w.WriteHeader(http.StatusOK)
		return w
	})
	switch {
	case err != nil && !started:
		writeError(w, err)
	case err != nil: // the status is sent; withholding the trailer tells the client
	default:
		w.Header().Set(BackupBytesTrailer, strconv.FormatInt(n, 10))
	}
}

// pingResponse is the body of GET /v1/ping: who the controller thinks you are.
type pingResponse struct {
	UID  uint32 `json:"uid"`
	User string `json:"user"`
}

func (e adminEndpoint) ping(w http.ResponseWriter, r *http.Request, caller peer) {
	writeJSON(w, http.StatusOK, pingResponse{UID: caller.UID, User: e.srv.users.name(caller.UID)})
}
