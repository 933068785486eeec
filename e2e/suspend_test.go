package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// countScript counts in the file count until the file stop appears.
const countScript = `#!/bin/bash
i=0
while [ ! -e stop ]; do i=$((i+1)); echo $i > count.tmp; mv count.tmp count; sleep 0.05; done
echo done
`

// readCount is the job's count so far, 0 before its first.
func readCount(t *testing.T, dir string) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "count"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// waitCountPast waits until the job's count passes n.
func waitCountPast(t *testing.T, dir string, n int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := readCount(t, dir); got > n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job's count stayed at %d", readCount(t, dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scontrol suspend freezes a job: its counting loop stops, squeue shows
// S, scontrol show job SUSPENDED with its SuspendTime; it stays frozen
// and suspended through a noded kill and restart; scontrol resume lets it
// count on and finish normally. A suspended job that is cancelled ends.
func TestSuspendResume(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	if err := os.WriteFile(filepath.Join(dir, "count.sh"), []byte(countScript), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		r := c.slurmCmd(bin, dir, name, args...)
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("%s %q: exit %d, stderr %q", name, args, r.Code, r.Stderr)
		}
		return r.Stdout
	}
	id, err := strconv.ParseUint(strings.TrimSpace(run("sbatch", "--parsable", "-c", "1", "count.sh")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ref := strconv.FormatUint(id, 10)
	c.WaitState(id, api.StateRunning, 30*time.Second)
	waitCountPast(t, dir, 2)

	run("scontrol", "suspend", ref)
	if st := run("squeue", "-h", "-j", ref, "-o", "%t"); st != "S\n" {
		t.Errorf("squeue %%t of the suspended job: %q, want S", st)
	}
	show := run("scontrol", "show", "job", ref)
	if !strings.Contains(show, " JobState=SUSPENDED ") || strings.Contains(show, "SuspendTime=None") {
		t.Errorf("scontrol show job of the suspended job:\n%s", show)
	}
	frozen := readCount(t, dir)
	for range 10 { // a frozen loop writes nothing
		time.Sleep(100 * time.Millisecond)
		if got := readCount(t, dir); got != frozen {
			t.Fatalf("the suspended job counted on: %d after %d", got, frozen)
		}
	}

	c.killNode(0)
	c.StartNode(node)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(c.Logs("ctld"), "node n1 restarted"); {
		if time.Now().After(deadline) {
			t.Fatal("ctld did not see the noded restart")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if l := c.Logs("noded-n1"); !strings.Contains(l, "job "+ref+" is suspended (frozen since") {
		t.Errorf("the restarted noded does not report the suspended job:\n%s", l)
	}
	if j := c.Job(id); j.State != api.StateSuspended {
		t.Fatalf("after the noded restart the job is %s, want SUSPENDED", j.State)
	}
	if got := readCount(t, dir); got != frozen {
		t.Fatalf("the job counted on through the noded restart: %d after %d", got, frozen)
	}
	if r := c.slurmCmd(bin, dir, "scontrol", "resume", ref); r.Code != 0 {
		t.Fatalf("scontrol resume: %+v", r)
	}
	waitCountPast(t, dir, frozen)
	if r := c.slurmCmd(bin, dir, "scontrol", "resume", ref); r.Code != 1 || r.Stderr != "Job is not suspended for job "+ref+"\n" {
		t.Errorf("resume of a running job: exit %d %q", r.Code, r.Stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted || j.SuspendTime == nil {
		t.Errorf("job ended %s (suspend time %v), want COMPLETED after its suspension", j.State, j.SuspendTime)
	}

	// A cancel thaws the suspended job to end it.
	if err := os.Remove(filepath.Join(dir, "stop")); err != nil {
		t.Fatal(err)
	}
	second, _ := strconv.ParseUint(strings.TrimSpace(run("sbatch", "--parsable", "-c", "1", "count.sh")), 10, 64)
	c.WaitState(second, api.StateRunning, 30*time.Second)
	run("scontrol", "suspend", strconv.FormatUint(second, 10))
	run("scancel", strconv.FormatUint(second, 10))
	if j := c.WaitEnded(second, 30*time.Second); j.State != api.StateCancelled {
		t.Errorf("a cancelled suspended job ended %s, want CANCELLED", j.State)
	}
}
