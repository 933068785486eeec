package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Both writers replace a file whole, with its mode, leave no temporary
// file and refuse a missing directory; they differ only in syncing.
func TestWriteFileAtomicReplacesWholeAndLeavesNoTemp(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{
		"WriteFileAtomic": WriteFileAtomic, "ReplaceFile": ReplaceFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			for _, want := range []string{"first", "second, longer"} {
				if err := write(p, []byte(want), 0o600); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(p)
				if err != nil || string(got) != want {
					t.Fatalf("read %q, %v; want %q", got, err, want)
				}
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", st.Mode().Perm())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("left behind: %v", ents)
			}
			if err := write(filepath.Join(dir, "no", "such", "dir"), nil, 0o600); err == nil {
				t.Error("writing into a missing directory succeeded")
			}
		})
	}
}

// TestWriteFileAtomicConcurrentWriters: writers of the same file at once
// each succeed and the file is one of their contents whole; with a
// shared temporary name one writer's rename took the other's file away
// (ENOENT), which failed a step's runner on a node whose noded recorded
// the runner's PID at the same moment.
func TestWriteFileAtomicConcurrentWriters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "runner.pid")
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		go func() {
			var err error
			for j := 0; j < 50 && err == nil; j++ {
				err = WriteFileAtomic(p, []byte("12345\n"), 0o600)
			}
			errs <- err
		}()
	}
	for i := 0; i < 16; i++ {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent writer failed: %v", err)
		}
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "12345\n" {
		t.Errorf("file %q (%v)", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
