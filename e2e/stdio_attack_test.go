package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestStdioAttack replays issue 11's findings 1 and 3 with the real
// binaries, as nobody through corral's own authentication:
//
//   - `corral submit --wait --input ROOTFILE -o ~/x.out --wrap cat` made
//     the root-owned file nobody's (runc fchowned the job's stdin); now
//     the job reads it and it stays root's, 0644. Likewise a world-writable
//     file appended to with --open-mode=append stays root's.
//   - `mkfifo ~/ff; corral submit -t 1 -o ~/ff` hung the shim in open(2),
//     past the time limit and deaf to cancel; now the job ends FAILED at
//     once naming the FIFO (also for --input), the node stays up, and the
//     next job on it runs and is cancelled by its owner.
func TestStdioAttack(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	if err := os.Chmod(c.Dir, 0o711); err != nil { // nobody reaches the credential socket; the key stays 0600
		t.Fatal(err)
	}
	home := shortTempDir(t) // nobody's "home", directly under /tmp
	if err := os.Chown(home, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(home, "ca.pem")
	pem, err := os.ReadFile(filepath.Join(c.Dir, "ctld", api.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, ca, string(pem))
	sock := filepath.Join(c.Dir, "cred-n1.sock")
	bob := func(args ...string) Result {
		t.Helper()
		return remoteCorral(t, c, nobodyUID, ca, sock, home, args...)
	}

	// Finding 1: a root-owned 0644 file as --input.
	rootFile := fmt.Sprintf("/etc/corral-rt-rootfile-%d", os.Getpid())
	mustRootFile(t, rootFile, "t\n", 0o644)
	r := bob("submit", "--wait", "--input", rootFile, "-o", filepath.Join(home, "x.out"), "--wrap", "cat")
	if r.Code != 0 {
		t.Errorf("submit --wait --input %s: exit %d: %s", rootFile, r.Code, r.Stderr)
	}
	mustOwnerMode(t, rootFile, 0, 0o644)
	if b, err := os.ReadFile(filepath.Join(home, "x.out")); err != nil || string(b) != "t\n" {
		t.Errorf("x.out = %q, %v; want the root file's content", b, err)
	}

	// Finding 1, sibling: a world-writable root file appended to.
	shared := filepath.Join(shortTempDir(t), "shared.log")
	os.Chmod(filepath.Dir(shared), 0o755)
	mustRootFile(t, shared, "log\n", 0o666)
	r = bob("submit", "--wait", "--open-mode=append", "-o", shared, "--wrap", "echo more")
	if r.Code != 0 {
		t.Errorf("submit --open-mode=append -o %s: exit %d: %s", shared, r.Code, r.Stderr)
	}
	mustOwnerMode(t, shared, 0, 0o666)
	if b, _ := os.ReadFile(shared); string(b) != "log\nmore\n" {
		t.Errorf("shared.log = %q, want the job's line appended", b)
	}

	// Finding 3: a FIFO as -o, and as --input.
	ff := filepath.Join(home, "ff")
	if err := syscall.Mkfifo(ff, 0o644); err != nil || os.Chown(ff, nobodyUID, nobodyUID) != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, flag := range []string{"-o", "--input"} {
		r := bob("submit", "--parsable", "-t", "1", flag, ff, "--wrap", "echo hi")
		if r.Code != 0 {
			t.Fatalf("submit %s FIFO: exit %d: %s", flag, r.Code, r.Stderr)
		}
		id, _ := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
		// Well under the 1-minute limit the old shim ignored.
		j := c.WaitEnded(id, 30*time.Second)
		if j.State != api.StateFailed || !strings.Contains(j.Message, "FIFO") {
			t.Errorf("job %d with a FIFO as %s ended %s: %q; want FAILED naming the FIFO", id, flag, j.State, j.Message)
		}
	}
	if st, err := os.Lstat(ff); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is no longer one: %v %v", st, err)
	}
	for _, n := range mustNodes(t, c) {
		if n.State == api.NodeDown {
			t.Errorf("node %s is down after the FIFO jobs: the refusal is the job's fault", n.Name)
		}
	}
	r = bob("submit", "--parsable", "-t", "1", "-o", filepath.Join(home, "sleep.out"), "--wrap", "sleep 100")
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if r.Code != 0 || err != nil {
		t.Fatalf("submit sleep: exit %d: %s", r.Code, r.Stderr)
	}
	c.WaitState(id, api.StateRunning, 30*time.Second)
	if r := bob("cancel", strconv.FormatUint(id, 10)); r.Code != 0 {
		t.Errorf("cancel: exit %d: %s", r.Code, r.Stderr)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCancelled {
		t.Errorf("cancelled job ended %s: %s", j.State, j.Message)
	}
}

// mustRootFile creates a root-owned file with an exact mode, removed when
// the test ends.
func mustRootFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	writeFile(t, path, content)
	t.Cleanup(func() { os.Remove(path) })
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mustOwnerMode(t *testing.T, path string, uid uint32, mode os.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Sys().(*syscall.Stat_t).Uid; got != uid || st.Mode().Perm() != mode {
		t.Errorf("%s: owner %d mode %v, want %d and %v", path, got, st.Mode().Perm(), uid, mode)
	}
}
