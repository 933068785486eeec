package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// remoteCorral runs bin/corral as uid over TCP (--ctld, TLS pinned to
// ca), with a credential from the node's credential socket: what a user
// on a login node does.
func remoteCorral(t *testing.T, c *Cluster, uid uint32, ca, credSock, dir string, args ...string) Result {
	t.Helper()
	// A copy nobody can execute (the build directory may be closed to it).
	bin := filepath.Join(dir, "corral")
	if _, err := os.Stat(bin); err != nil {
		data, err := os.ReadFile(filepath.Join(binDir, "corral"))
		if err != nil || os.WriteFile(bin, data, 0o755) != nil {
			t.Fatalf("copying corral: %v", err)
		}
	}
	cmd := exec.Command(bin, append([]string{"--ctld", c.CtldURL, "--ca", ca}, args...)...)
	cmd.Env = append(os.Environ(), api.CredentialSocketEnv+"="+credSock, api.SocketEnv+"=/nonexistent/ctld.sock")
	cmd.Dir = dir
	return runAs(t, cmd, uid)
}

// TestRemoteUserOverTLS: nobody, on "another host", submits and queries
// over ctld's TLS port with a credential from noded's socket; the job is
// nobody's, is launched on the node over TLS, and completes. A wrong CA
// is refused with one line.
func TestRemoteUserOverTLS(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	c.WaitNodesUp(1, 20*time.Second)
	if err := os.Chmod(c.Dir, 0o711); err != nil { // nobody reaches the credential socket; the key stays 0600
		t.Fatal(err)
	}
	dir := shortTempDir(t) // directly under /tmp: t.TempDir's parent is closed to nobody
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")
	pem, err := os.ReadFile(filepath.Join(c.Dir, "ctld", api.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(c.Dir, "cred-n1.sock")
	r := remoteCorral(t, c, nobodyUID, ca, sock, dir, "submit", "--parsable", "-t", "1", "--wrap", "id -u")
	if r.Code != 0 {
		t.Fatalf("remote submit: exit %d: %s", r.Code, r.Stderr)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("remote submit printed %q", r.Stdout)
	}
	j := c.WaitEnded(id, 30*time.Second)
	if j.UID != nobodyUID || j.State != api.StateCompleted {
		t.Fatalf("remote job: uid %d state %s (%s)", j.UID, j.State, c.Logs("ctld"))
	}
	if r := remoteCorral(t, c, nobodyUID, ca, sock, dir, "show", "job", strconv.FormatUint(id, 10)); r.Code != 0 || !strings.Contains(r.Stdout, "nobody") {
		t.Errorf("remote show: exit %d: %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(c.Logs("ctld"), "certified a node key") {
		t.Error("the node never asked for a TLS certificate: is noded serving plain HTTP?")
	}
	// No CA to pin: refused, one line, before anything is sent.
	if r := remoteCorral(t, c, nobodyUID, filepath.Join(dir, "missing.pem"), sock, dir, "queue"); r.Code == 0 ||
		strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "cluster CA") {
		t.Errorf("a missing CA: exit %d: %q", r.Code, r.Stderr)
	}
}
