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

// TestSubmitUmask: a job runs with the umask corral submit ran with (as
// sbatch's SLURM_UMASK), whatever the node's: files it makes and its
// output file are private under umask 077, and it sees SLURM_UMASK=0077.
// An explicit SLURM_UMASK wins, as with sbatch.
func TestSubmitUmask(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	submit := func(umask string, env ...string) uint64 {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", "umask "+umask+"; exec \"$0\" \"$@\"", filepath.Join(binDir, "corral"),
			"submit", "--parsable", "-o", "out-%j.txt", "--wrap", "touch made-$SLURM_JOB_ID; echo $SLURM_UMASK")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "SLURM_UMASK=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(append(cmd.Env, api.SocketEnv+"="+c.Socket), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("submit with umask %s: %v", umask, err)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			t.Fatalf("submit printed %q", out)
		}
		return id
	}
	check := func(id uint64, wantVar string, wantMode os.FileMode) {
		t.Helper()
		if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted {
			t.Fatalf("job %d: %s %q", id, j.State, j.Message)
		}
		n := strconv.FormatUint(id, 10)
		if lines := readLines(t, filepath.Join(dir, "out-"+n+".txt")); len(lines) != 1 || lines[0] != wantVar {
			t.Errorf("job %d saw SLURM_UMASK %q, want %s", id, lines, wantVar)
		}
		for _, f := range []string{"made-" + n, "out-" + n + ".txt"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != wantMode {
				t.Errorf("job %d: %s has mode %v (%v), want %v", id, f, st.Mode().Perm(), err, wantMode)
			}
		}
	}
	check(submit("077"), "0077", 0o600)
	check(submit("077", "SLURM_UMASK=0027"), "0027", 0o640)
	if r := runUmaskSubmitBad(t, c, dir); r.Code == 0 || !strings.Contains(r.Stderr, "SLURM_UMASK") {
		t.Errorf("submit with SLURM_UMASK=0999: exit %d, stderr %q; want a refusal naming it", r.Code, r.Stderr)
	}
}

// runUmaskSubmitBad submits with an unusable SLURM_UMASK.
func runUmaskSubmitBad(t *testing.T, c *Cluster, dir string) Result {
	t.Helper()
	t.Setenv("SLURM_UMASK", "0999")
	return runCorral(t, c.Socket, dir, "submit", "--wrap", "true")
}
