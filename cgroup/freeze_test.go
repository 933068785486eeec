package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeKernel stands for the kernel under a fake cgroup2 directory: it
// reports in cgroup.events what cgroup.freeze asks, until stop closes.
func fakeKernel(dir string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.freeze"))
		if len(strings.TrimSpace(string(b))) == 0 {
			continue // caught between os.WriteFile's truncate and write: the kernel's file has no such moment
		}
		// Whole or not at all, as the kernel's file reads.
		tmp := filepath.Join(dir, "events.tmp")
		_ = os.WriteFile(tmp, []byte("populated 1\nfrozen "+strings.TrimSpace(string(b))+"\n"), 0o644)
		_ = os.Rename(tmp, filepath.Join(dir, "cgroup.events"))
	}
}

// On cgroup2 a freeze writes cgroup.freeze and waits for cgroup.events to
// say frozen; a thaw the reverse.
func TestFreezeV2FakeTree(t *testing.T) {
	root := fakeTree(t, map[string]string{"job/cgroup.freeze": "0\n", "job/cgroup.events": "populated 1\nfrozen 0\n"})
	dir := filepath.Join(root, "job")
	dirs := map[string]string{"": dir, "memory": "/ignored/on/v2"}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { fakeKernel(dir, stop); close(done) }()
	// The fake kernel must be gone before t.TempDir is removed: a write of
	// its events.tmp after the removal listed the directory fails it.
	defer func() { close(stop); <-done }()
	for _, frozen := range []bool{true, false} {
		if err := Freeze(dirs, frozen); err != nil {
			t.Fatalf("Freeze(%v): %v", frozen, err)
		}
		want := map[bool]string{true: "1", false: "0"}[frozen]
		if got := readFake(t, filepath.Join(dir, "cgroup.freeze")); got != want {
			t.Errorf("Freeze(%v) wrote %q, want %q", frozen, got, want)
		}
		if got, err := Frozen(dirs); err != nil || got != frozen {
			t.Errorf("Frozen after Freeze(%v) = %v, %v", frozen, got, err)
		}
	}
}

// A freeze the kernel never finishes is an error, not a hang; a cgroup
// without a freezer is refused.
func TestFreezeFailures(t *testing.T) {
	root := fakeTree(t, map[string]string{"job/cgroup.freeze": "0\n", "job/cgroup.events": "populated 1\nfrozen 0\n"})
	defer func(d time.Duration) { freezeWait = d }(freezeWait)
	freezeWait = 20 * time.Millisecond
	if err := Freeze(map[string]string{"": filepath.Join(root, "job")}, true); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("a freeze that never ends: %v", err)
	}
	if err := Freeze(map[string]string{"memory": root}, true); err == nil || !strings.Contains(err.Error(), "no freezer") {
		t.Errorf("no freezer: %v", err)
	}
}

// On v1 (and hybrid, which also lists the unified directory) the freezer
// controller's freezer.state is used.
func TestFreezeV1FakeTree(t *testing.T) {
	root := fakeTree(t, map[string]string{"freezer/job/freezer.state": "THAWED\n", "unified/job/cgroup.freeze": "0\n"})
	dirs := map[string]string{"freezer": filepath.Join(root, "freezer/job"), "": filepath.Join(root, "unified/job")}
	if err := Freeze(dirs, true); err != nil {
		t.Fatal(err)
	}
	if got := readFake(t, filepath.Join(root, "freezer/job/freezer.state")); got != "FROZEN" {
		t.Errorf("freezer.state %q, want FROZEN", got)
	}
	if got := readFake(t, filepath.Join(root, "unified/job/cgroup.freeze")); got != "0\n" {
		t.Errorf("cgroup.freeze changed to %q on a host with a v1 freezer", got)
	}
}
