package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// MarkerSuffix names the marker file beside the state file
// (ctld.db.marker). It records that the state directory has handed out
// job IDs, in a file of its own, so that a state file that went missing,
// came back empty or was replaced by a fresh database cannot pass for a
// new cluster: the controller would start with no jobs and hand out IDs
// from 1 again, losing every job without a word.
const MarkerSuffix = ".marker"

// marker is the marker file's content.
type marker struct {
	// LastJobID is a lower bound of the highest job ID the state file
	// handed out: it is written once IDs exist and raised at each start
	// and clean stop.
	LastJobID uint64    `json:"last_job_id"`
	Written   time.Time `json:"written"`
}

func markerPath(dbPath string) string { return dbPath + MarkerSuffix }

// readMarker returns the marker beside dbPath (zero when there is none).
func readMarker(dbPath string) (marker, error) {
	var m marker
	body, err := os.ReadFile(markerPath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal(body, &m)
	}
	if err != nil {
		return m, fmt.Errorf("marker file %s is unreadable (%v); it records whether this state directory held jobs: restore it, or remove it only if %s is known to be the right state file",
			markerPath(dbPath), err, dbPath)
	}
	return m, nil
}

// writeMarker replaces the marker atomically (temporary file, fsync,
// rename, fsync of the directory): a crash leaves the old or the new one.
func writeMarker(dbPath string, last uint64) error {
	body, err := json.Marshal(marker{LastJobID: last, Written: time.Now().UTC()})
	if err != nil {
		return err
	}
	dir := filepath.Dir(dbPath)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(markerPath(dbPath))+"-*")
	if err != nil {
		return fmt.Errorf("writing the state marker: %w", err)
	}
	_, err = tmp.Write(append(body, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), markerPath(dbPath))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the state marker: %w", err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// errLostJobs is the refusal when the marker says jobs existed and the
// state file has none. what describes the state file ("is missing", ...).
func errLostJobs(dbPath, what string, m marker) error {
	return fmt.Errorf("state file %s %s, but %s records that job IDs up to at least %d were handed out: refusing to start with no jobs; "+
		"restore the last `corral admin backup` copy (cp BACKUP %s, see docs/operations.md), or remove %s to start an empty cluster on purpose",
		dbPath, what, markerPath(dbPath), m.LastJobID, dbPath, markerPath(dbPath))
}

// checkBeforeBolt is what Open and Check do before bbolt sees the file:
// read the marker, refuse a missing file the marker says held jobs, and
// check the pages of an existing one (pages.go). A missing file without
// a marker is a new state directory.
func checkBeforeBolt(dbPath string) (marker, error) {
	mark, err := readMarker(dbPath)
	if err != nil {
		return mark, err
	}
	if _, err := os.Lstat(dbPath); errors.Is(err, os.ErrNotExist) {
		if mark.LastJobID > 0 {
			return mark, errLostJobs(dbPath, "is missing", mark)
		}
		return mark, nil
	}
	return mark, checkPages(dbPath)
}

// updateMarker raises the marker to the last ID handed out: after the
// first commit that handed out IDs, and at Close. The jobs are committed
// either way: a failed write is tried again after the next commit, at
// Close and at the next start.
func (s *Store) updateMarker() {
	last, err := lastJobID(s.db)
	if err == nil && last > s.markedID && writeMarker(s.path, last) == nil {
		s.markedID = last
	}
}

// HasRun reports whether a controller has run on the state file at
// dbPath: its marker exists. The cluster key and CA beside such a file
// were made then and are pinned by nodes, so a missing one must be
// restored, never silently made anew (a fresh directory holding only a
// restored backup copy has no marker yet, and may make them).
func HasRun(dbPath string) (bool, error) {
	_, err := os.Lstat(markerPath(dbPath))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("state marker: %w", err)
	}
}
