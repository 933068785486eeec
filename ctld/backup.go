package ctld

import (
	"io"
	"time"

	"github.com/corral-hpc/corral/ctld/fault"
)

// BackupPath is the user-plane route that streams a consistent copy of
// the state file (admins only; `corral admin backup FILE`).
const BackupPath = "/v1/admin/backup"

// backup writes the state file to the writer open gives, from one read
// transaction (store.Backup): submits go on meanwhile, and the copy is
// exactly the state as of its start, a valid file ctld starts from as it
// is. open is called only once the caller is known to be an
// administrator; backup returns the bytes written.
func (s *Server) backup(caller peer, open func() io.Writer) (int64, error) {
	if !s.gate.IsAdmin(caller.caller()) {
		return 0, fault.Errorf(fault.Forbidden, "backup: only administrators may copy the state file")
	}
	start := time.Now()
	n, err := s.store.Backup(open())
	if err != nil {
		s.log.Printf("backup for uid %d failed after %d bytes: %v", caller.UID, n, err)
		return n, err
	}
	s.log.Printf("backup for uid %d: %d bytes in %s", caller.UID, n, time.Since(start).Round(time.Millisecond))
	return n, nil
}
