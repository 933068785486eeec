package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/ctld/store/storetest"
)

func TestEveryDamageIsRefusedWithoutChange(t *testing.T) {
	for _, dmg := range storetest.Damages {
		t.Run(dmg.Name, func(t *testing.T) {
			path := mustFilledFile(t, 300)
			dmg.Do(t, path)
			before := storetest.Digest(t, path)
			if _, err := Check(path); err == nil || strings.Contains(err.Error(), "\n") {
				t.Errorf("Check = %v, want one error line", err)
			}
			if s, err := Open(path, Options{OpenTimeout: 200 * time.Millisecond}); err == nil {
				s.Close()
				t.Error("Open accepted the damaged file")
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("Open = %q, want one line", err)
			}
			if storetest.Digest(t, path) != before {
				t.Error("checking or refusing the file changed it")
			}
		})
	}
}

func TestOneTornMetaChecksumFallsBackAsBboltDoes(t *testing.T) {
	// A crash while bbolt writes a meta page leaves that page failing its
	// checksum; bbolt then uses the other, an earlier commit. That is its
	// crash recovery, not damage: the file opens.
	path := mustFilledFile(t, 50)
	storetest.Rewrite(func(d []byte) []byte { d[os.Getpagesize()+16+20] ^= 0xFF; return d })(t, path) // meta 1's root
	if _, err := Check(path); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// mustMarkedDir returns a state file that handed out IDs 1..3 and whose
// marker says so.
func mustMarkedDir(t *testing.T) string {
	t.Helper()
	s := MustOpen(t, "")
	for range 3 {
		mustAdd(t, s, newRecord("j", time.Now()))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := readMarker(s.Path())
	if err != nil || m.LastJobID == 0 {
		t.Fatalf("marker after 3 jobs: %+v, %v", m, err)
	}
	return s.Path()
}

func TestMarkerRefusesAStateFileThatLostItsJobs(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), FileName) // a valid store that never had a job
	f := MustOpen(t, fresh)
	f.Close()
	if _, err := os.Stat(markerPath(fresh)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a store without jobs wrote a marker: %v", err)
	}
	freshBytes, _ := os.ReadFile(fresh)
	tests := []struct {
		name, want string
		do         func(path string) error
	}{
		{"file removed", "is missing", os.Remove},
		{"emptied", "empty (0 bytes)", func(p string) error { return os.Truncate(p, 0) }},
		{"replaced by a fresh store", "holds no jobs", func(p string) error { return os.WriteFile(p, freshBytes, 0o600) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mustMarkedDir(t)
			if err := tt.do(path); err != nil {
				t.Fatal(err)
			}
			before := storetest.Digest(t, path)
			for what, try := range map[string]func() error{
				"Open":  func() error { s, err := Open(path, Options{}); s.closeIfOpen(); return err },
				"Check": func() error { _, err := Check(path); return err },
			} {
				err := try()
				if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s = %v, want one line with %q", what, err, tt.want)
				}
			}
			if storetest.Digest(t, path) != before {
				t.Error("the refusal changed the file")
			}
		})
	}
	t.Run("the refusal names the restore", func(t *testing.T) {
		path := mustMarkedDir(t)
		os.Remove(path)
		_, err := Open(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "corral admin backup") || !strings.Contains(err.Error(), "cp BACKUP "+path) {
			t.Fatalf("Open = %v", err)
		}
	})
}

func (s *Store) closeIfOpen() {
	if s != nil {
		s.Close()
	}
}

func TestMarkerAllowsAnOlderBackupAndIsWrittenForOldDirectories(t *testing.T) {
	path := mustMarkedDir(t)
	var backup bytes.Buffer
	s := MustOpen(t, path)
	if _, err := s.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, newRecord("after the backup", time.Now()))
	s.Close()
	// Restoring the older copy (docs/operations.md) still starts.
	if err := os.WriteFile(path, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s = MustOpen(t, path)
	s.Close()
	// A state directory from before the marker gets one at its next start.
	os.Remove(markerPath(path))
	s = MustOpen(t, path)
	s.Close()
	if m, err := readMarker(path); err != nil || m.LastJobID != 3 {
		t.Fatalf("marker = %+v, %v; want last job 3", m, err)
	}
	os.WriteFile(markerPath(path), []byte("{garbage"), 0o600)
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "marker file") {
		t.Fatalf("Open with a garbled marker = %v", err)
	}
}
