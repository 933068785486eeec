package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Pipelines on a real cluster: arrays, dependencies, --wait, hold and
// release, and the accounting history. One cluster (one node, 2 CPUs)
// serves every subtest, in order.
func TestPipelines(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	t.Run("array of 4 writes %A_%a with its SLURM_ARRAY_ variables", func(t *testing.T) { testArray(t, c, dir) })
	t.Run("afterok then afternotok: the last is cancelled", func(t *testing.T) { testChain(t, c, dir) })
	t.Run("--wait exits with the job's exit code", func(t *testing.T) { testWait(t, c, dir) })
	t.Run("hold then release", func(t *testing.T) { testHoldRelease(t, c, dir) })
	t.Run("acct: the FINISHED and OTHERS tabs", func(t *testing.T) { testAcctTabs(t, c, dir) })
}

func testArray(t *testing.T, c *Cluster, dir string) {
	base := c.Submit(dir, "--array=0-3", "-o", "task-%A_%a.out", "--wrap",
		`echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $CORRAL_ARRAY_TASK_ID $SLURM_JOB_ID`)
	for i := range 4 {
		task := c.WaitEnded(base+uint64(i), 30*time.Second)
		if task.State != api.StateCompleted || task.ArrayJobID != base || task.ArrayTaskID == nil || *task.ArrayTaskID != i {
			t.Fatalf("task %d: %s array %d/%v", i, task.State, task.ArrayJobID, task.ArrayTaskID)
		}
		want := fmt.Sprintf("%d %d 4 0 3 1 %d %d", base, i, i, base+uint64(i))
		if got := readLines(t, filepath.Join(dir, fmt.Sprintf("task-%d_%d.out", base, i))); len(got) != 1 || got[0] != want {
			t.Errorf("task %d wrote %q, want %q", i, got, want)
		}
	}
	r := c.Corral("acct", "-j", strconv.FormatUint(base, 10))
	completed := 0 // tasks' lines, not their steps' (12_3.batch)
	for _, l := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.Contains(f[0], ".") && strings.Contains(l, "COMPLETED") {
			completed++
		}
	}
	if r.Code != 0 || completed != 4 || !strings.Contains(r.Stdout, fmt.Sprintf("%d_3 ", base)) {
		t.Errorf("acct of the array:\n%s%s", r.Stdout, r.Stderr)
	}
}

func testChain(t *testing.T, c *Cluster, dir string) {
	a := c.Submit(dir, "--wrap", "sleep 0.5")
	b := c.Submit(dir, "-d", fmt.Sprintf("afterok:%d", a), "--wrap", "true")
	last := c.Submit(dir, "-d", fmt.Sprintf("afternotok:%d", b), "--wrap", "echo should not run")
	if j := c.Job(b); j.State != api.StatePending {
		t.Fatalf("b is %s before a ended", j.State)
	}
	ja := c.WaitEnded(a, 30*time.Second)
	jb := c.WaitEnded(b, 30*time.Second)
	if ja.State != api.StateCompleted || jb.State != api.StateCompleted || jb.StartTime.Before(*ja.EndTime) {
		t.Fatalf("a %s (end %v), b %s (start %v)", ja.State, ja.EndTime, jb.State, jb.StartTime)
	}
	jc := c.WaitEnded(last, 30*time.Second)
	if jc.State != api.StateCancelled || jc.Reason != api.ReasonDependencyNeverSatisfied || jc.StartTime != nil {
		t.Fatalf("c: %s (%s) started %v", jc.State, jc.Reason, jc.StartTime)
	}
	r := c.Corral("show", "job", strconv.FormatUint(last, 10))
	if !strings.Contains(r.Stdout, "Reason=DependencyNeverSatisfied") || !strings.Contains(r.Stdout, fmt.Sprintf("Dependency=afternotok:%d", b)) {
		t.Errorf("show job:\n%s", r.Stdout)
	}
}

func testWait(t *testing.T, c *Cluster, dir string) {
	start := time.Now()
	r := runCorral(t, c.Socket, dir, "submit", "--wait", "--wrap", "sleep 0.3; exit 3")
	if r.Code != 3 || !strings.HasPrefix(r.Stdout, "Submitted batch job ") || !strings.Contains(r.Stderr, "ended FAILED (exit status 3)") {
		t.Fatalf("submit --wait: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	id, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(r.Stdout, "Submitted batch job ")), 10, 64)
	if j := c.Job(id); j.State != api.StateFailed || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("--wait returned before the job ended: %s", j.State)
	}
	if r := runCorral(t, c.Socket, dir, "submit", "--wait", "--array=0-1", "--wrap", "exit $SLURM_ARRAY_TASK_ID"); r.Code != 1 {
		t.Fatalf("submit --wait of an array: exit %d (%s), want the highest task's 1", r.Code, r.Stderr)
	}
	if r := runCorral(t, c.Socket, dir, "submit", "-W", "--wrap", "true"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("submit -W of a job that succeeds: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

func testHoldRelease(t *testing.T, c *Cluster, dir string) {
	id := c.Submit(dir, "-H", "-o", "held.out", "--wrap", "echo released")
	c.WaitJob(id, 10*time.Second, "JobHeld", func(j *api.Job) bool { return j.Reason == api.ReasonJobHeld })
	time.Sleep(1500 * time.Millisecond) // a scheduling cycle or more
	if j := c.Job(id); j.State != api.StatePending {
		t.Fatalf("held job is %s", j.State)
	}
	if r := c.Corral("release", strconv.FormatUint(id, 10)); r.Code != 0 {
		t.Fatalf("release: %d %s", r.Code, r.Stderr)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted {
		t.Fatalf("released job ended %s", j.State)
	}
	if got := readLines(t, filepath.Join(dir, "held.out")); !slices.Equal(got, []string{"released"}) {
		t.Errorf("output %q", got)
	}
}

// Seed 002's session tabs: FINISHED is corral acct -s COMPLETED, OTHERS
// (sessions with errors) is -s FAILED,OUT_OF_MEMORY,TIMEOUT,NODE_FAIL.
func testAcctTabs(t *testing.T, c *Cluster, dir string) {
	ok := c.Submit(dir, "--wrap", "true")
	failed := c.Submit(dir, "--wrap", "exit 2")
	oom := c.Submit(dir, "--mem", "64M", "--wrap", "head -c 300M /dev/zero | tail")
	timeout := c.Submit(dir, "-t", "0:01", "--wrap", "sleep 60")
	for _, id := range []uint64{ok, failed, oom, timeout} {
		c.WaitEnded(id, 30*time.Second)
	}
	acctIDs := func(states string) map[uint64]api.JobState {
		t.Helper()
		r := c.Corral("acct", "-s", states, "--json")
		var recs []api.AcctRecord
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &recs) != nil {
			t.Fatalf("acct -s %s: exit %d %s", states, r.Code, r.Stderr)
		}
		out := map[uint64]api.JobState{}
		for _, rec := range recs {
			out[rec.JobID] = rec.State
		}
		return out
	}
	finished := acctIDs("COMPLETED")
	others := acctIDs("FAILED,OUT_OF_MEMORY,TIMEOUT,NODE_FAIL")
	if finished[ok] != api.StateCompleted || finished[failed] != "" || others[ok] != "" {
		t.Errorf("FINISHED %v, OTHERS %v", finished, others)
	}
	for id, want := range map[uint64]api.JobState{failed: api.StateFailed, oom: api.StateOutOfMemory, timeout: api.StateTimeout} {
		if others[id] != want {
			t.Errorf("OTHERS has job %d as %q, want %s (all: %v)", id, others[id], want, others)
		}
	}
	r := c.Corral("acct", "-s", "COMPLETED")
	line := ""
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, strconv.FormatUint(ok, 10)+" ") {
			line = l
		}
	}
	if !strings.HasPrefix(r.Stdout, "JOBID ") || !strings.Contains(line, "COMPLETED  0:0") || !strings.Contains(line, "n1") {
		t.Errorf("acct table:\n%s", r.Stdout)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
