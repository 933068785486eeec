package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// mustStateDir returns a state directory whose ctld.db holds n jobs.
func mustStateDir(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(shortTempDir(t), "state")
	s, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		rec := &store.JobRecord{Job: api.Job{Name: "j", User: "alice", State: api.StatePending, SubmitTime: time.Now()}}
		if _, err := s.AddJob(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckFlag(t *testing.T) {
	sound := mustStateDir(t, 3)
	damagedDir := mustStateDir(t, 3)
	db := filepath.Join(damagedDir, store.FileName)
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * os.Getpagesize() { // both meta pages
		data[i] ^= 0xFF
	}
	os.WriteFile(db, data, 0o600)
	tests := []struct {
		state, wantOut, wantErr string
	}{
		{sound, "is sound: 3 jobs, 0 arrays, 0 nodes, 0 steps, last job ID 3", ""},
		{damagedDir, "", "state file is damaged: " + db},
		{filepath.Join(sound, "nowhere"), "", "no such file"},
	}
	for _, tt := range tests {
		var stdout bytes.Buffer
		app := newApp(&bytes.Buffer{})
		app.Writer = &stdout
		err := app.Run([]string{"corral-ctld", "--check", "--state", tt.state})
		got := stdout.String()
		if tt.wantErr == "" {
			if err != nil || !strings.Contains(got, tt.wantOut) || strings.Count(got, "\n") != 1 {
				t.Errorf("--check %s: %q, %v; want one line with %q", tt.state, got, err, tt.wantOut)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") || got != "" {
			t.Errorf("--check %s: %q, %v; want one error line with %q", tt.state, got, err, tt.wantErr)
		}
	}
	// Without --check, the controller refuses to start on the damaged file.
	err = newApp(&bytes.Buffer{}).Run([]string{"corral-ctld", "--state", damagedDir,
		"--socket", filepath.Join(damagedDir, "s.sock"), "--listen", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "state file is damaged") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("start on a damaged file: %v", err)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, data) {
		t.Fatal("the refused file was changed")
	}
}
