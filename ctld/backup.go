package ctld

import (
	"net/http"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/ctld/fault"
)

// BackupPath is the user-plane route that streams a consistent copy of
// the state file (admins only; `corral admin backup FILE`).
const BackupPath = "/v1/admin/backup"

// BackupBytesTrailer carries the copy's length after its last byte: a
// client that read fewer bytes, or no trailer, holds a truncated copy.
const BackupBytesTrailer = "Corral-Backup-Bytes"

// adminRoutes registers the administrators' state-file routes.
func (s *Server) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+BackupPath, s.withCaller(s.handleBackup))
}

// handleBackup streams the state file from one read transaction
// (store.Backup): submits go on meanwhile, and the copy is exactly the
// state as of its start, a valid file ctld starts from as it is.
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request, caller peer) {
	if !s.gate.IsAdmin(caller.caller()) {
		writeError(w, fault.Errorf(fault.Forbidden, "backup: only administrators may copy the state file"))
		return
	}
	start := time.Now()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Trailer", BackupBytesTrailer)
	w.WriteHeader(http.StatusOK)
	n, err := s.store.Backup(w)
	if err != nil {
		// The status is sent; withholding the trailer tells the client.
		s.log.Printf("backup for uid %d failed after %d bytes: %v", caller.UID, n, err)
		return
	}
	w.Header().Set(BackupBytesTrailer, strconv.FormatInt(n, 10))
	s.log.Printf("backup for uid %d: %d bytes in %s", caller.UID, n, time.Since(start).Round(time.Millisecond))
}
