package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// mustFilledFile returns a closed state file holding n jobs and one node.
func mustFilledFile(t testing.TB, n int) string {
	t.Helper()
	s := MustOpen(t, "")
	now := time.Now()
	// Through the group committer's own commit, 1,000 a transaction: a
	// commit per job would make 100,000 take minutes.
	var group []*addRequest
	for i := range n {
		body, err := json.Marshal(newRecord(fmt.Sprintf("job-%06d", i), now))
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, &addRequest{body: body})
		if len(group) == 1000 || i == n-1 {
			if err := s.commitGroup(group); err != nil {
				t.Fatal(err)
			}
			group = group[:0]
		}
	}
	if err := s.PutNodes(NodeRecord{Name: "n1", Addr: "127.0.0.1:1", CPUs: 2, MemBytes: 1 << 30, LastSeen: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

// pageOf returns the offset of the page holding marker in the file.
func pageOf(t *testing.T, data []byte, marker string) int {
	t.Helper()
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("marker %q not in the file", marker)
	}
	ps := os.Getpagesize()
	return i / ps * ps
}

func TestDamagedFileIsRefused(t *testing.T) {
	ps := os.Getpagesize()
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, data []byte) []byte
	}{
		{"leaf page header garbled", func(t *testing.T, _ string, d []byte) []byte {
			off := pageOf(t, d, "job-000150")
			copy(d[off:off+16], bytes.Repeat([]byte{0xA5}, 16))
			return d
		}},
		{"leaf page zeroed", func(t *testing.T, _ string, d []byte) []byte {
			off := pageOf(t, d, "job-000299")
			clear(d[off : off+ps])
			return d
		}},
		{"both meta pages garbled", func(t *testing.T, _ string, d []byte) []byte {
			for i := range 2 * ps {
				d[i] ^= 0x5A
			}
			return d
		}},
		{"truncated to half", func(t *testing.T, _ string, d []byte) []byte {
			return d[:len(d)/2/ps*ps]
		}},
		{"record that is not JSON", func(t *testing.T, path string, d []byte) []byte {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketJobs).Put(idKey(7), []byte("{half")) }); err != nil {
				t.Fatal(err)
			}
			return nil // written through bbolt: structurally sound
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mustFilledFile(t, 300)
			if _, err := Check(path); err != nil {
				t.Fatalf("Check of the sound file: %v", err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := tt.damage(t, path, data); d != nil {
				if err := os.WriteFile(path, d, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(path)
			_, err = Check(path)
			if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Check = %v, want one line wrapping ErrDamaged", err)
			}
			s, err := Open(path, Options{OpenTimeout: 200 * time.Millisecond})
			if err == nil {
				// Only a record-level fault passes Open's structure check;
				// reading the jobs (what the controller does next) must fail.
				_, jerr := s.Jobs()
				s.Close()
				if jerr == nil {
					t.Fatal("Open and Jobs accepted a damaged file")
				}
			} else if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Open = %v, want one line wrapping ErrDamaged", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Fatal("checking or refusing the file changed it")
			}
		})
	}
}

func TestCheckReportsASoundFile(t *testing.T) {
	path := mustFilledFile(t, 40)
	rep, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Jobs != 40 || rep.Nodes != 1 || rep.LastJobID != 40 || rep.Bytes <= 0 {
		t.Fatalf("report = %+v", rep)
	}
	if _, err := Check(filepath.Join(t.TempDir(), "missing.db")); err == nil || errors.Is(err, ErrDamaged) {
		t.Fatalf("Check of a missing file = %v, want a plain error", err)
	}
}

func TestBackupIsAConsistentStateFile(t *testing.T) {
	s := MustOpen(t, "")
	defer s.Close()
	now := time.Now()
	for i := range 50 {
		mustAdd(t, s, newRecord(fmt.Sprintf("b%d", i), now))
	}
	// Submits keep arriving while the copy is written: the copy holds
	// exactly the jobs committed before its transaction began.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				mustAdd(t, s, newRecord("during", now))
			}
		}
	}()
	var buf bytes.Buffer
	n, err := s.Backup(&buf)
	close(stop)
	<-done
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Backup = %d, %v (buffer %d)", n, err, buf.Len())
	}
	copyPath := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Jobs < 50 || uint64(rep.Jobs) != rep.LastJobID {
		t.Fatalf("copy: %+v: want every job from 1 to the last ID", rep)
	}
	c := MustOpen(t, copyPath)
	defer c.Close()
	for i, rec := range mustJobs(t, c) {
		if rec.Job.ID != uint64(i+1) {
			t.Fatalf("copy: job %d at position %d", rec.Job.ID, i)
		}
	}
}

// BenchmarkCheck100k measures the structure checks Open runs (pages.go,
// then bbolt's), and the full
// Check (every record decoded), on a file of 100,000 jobs.
func BenchmarkCheck100k(b *testing.B) {
	path := mustFilledFile(b, 100_000)
	b.Run("open-verify", func(b *testing.B) {
		for b.Loop() {
			if err := checkPages(path); err != nil {
				b.Fatal(err)
			}
			db, err := openBolt(path, &bolt.Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := verifyStructure(db); err != nil {
				b.Fatal(err)
			}
			db.Close()
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, err := Check(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
