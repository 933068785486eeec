package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sstat with the real binaries: a running step's MaxRSS, read from its
// task's processes on the node, grows once the task allocates memory;
// a job with no step running gets Slurm's message.
func TestSstatMaxRSSGrows(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "1G"}}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	bin := slurmBin(t, dir)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	// The task holds 100 MB in a shell variable once the flag appears.
	task := `while [ ! -e flag ]; do sleep 0.1; done; x=$(head -c 100000000 /dev/zero | tr "\000" a); touch allocated; sleep 300`
	id := c.Submit(dir, "--mem=600M", "-o", "out", "--wrap", "srun sh -c '"+task+"'")
	c.WaitState(id, api.StateRunning, 60*time.Second)
	step := fmt.Sprintf("%d.0", id)
	maxRSS := func() (int64, string) {
		r := c.slurmCmd(bin, dir, "sstat", "-j", step, "-n", "-P", "-o", "JobID,MaxRSS,NTasks")
		f := strings.Split(strings.TrimSpace(r.Stdout), "|")
		if r.Code != 0 || len(f) != 3 || f[0] != step || f[2] != "1" {
			return -1, fmt.Sprintf("exit %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		return parseKB(f[1]), r.Stdout
	}
	before, out := int64(-1), ""
	for deadline := time.Now().Add(30 * time.Second); before <= 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		before, out = maxRSS()
	}
	if before <= 0 {
		t.Fatalf("sstat of the running step: %s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "allocated")); err == nil {
			break
		}
	}
	after, out := maxRSS()
	if after < before+90_000 { // KB: the 100 MB held
		t.Fatalf("MaxRSS %d KB before the allocation, then %d KB (%s): want 100 MB more", before, after, out)
	}
	if r := c.slurmCmd(bin, dir, "sstat", "-j", fmt.Sprint(id), "-o", "Bogus"); r.Code != 1 || r.Stderr != "sstat: error: Invalid field requested: \"Bogus\"\n" {
		t.Errorf("sstat -o Bogus: exit %d %q", r.Code, r.Stderr)
	}
	if r := c.Corral("cancel", fmt.Sprint(id)); r.Code != 0 {
		t.Fatalf("cancel: %d %q", r.Code, r.Stderr)
	}
	c.WaitEnded(id, 60*time.Second)
	r := c.slurmCmd(bin, dir, "sstat", "-j", fmt.Sprint(id))
	if want := fmt.Sprintf("sstat: error: No steps running for job %d\n", id); r.Code != 1 || r.Stderr != want {
		t.Errorf("sstat of an ended job: exit %d %q, want %q", r.Code, r.Stderr, want)
	}
}

// parseKB reads a size as sstat prints it (123K, 1.50M, 2G) in KB.
func parseKB(s string) int64 {
	if s == "" {
		return 0
	}
	mult := map[byte]float64{'K': 1, 'M': 1 << 10, 'G': 1 << 20, 'T': 1 << 30}[s[len(s)-1]]
	n, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || mult == 0 {
		return -1
	}
	return int64(n * mult)
}
