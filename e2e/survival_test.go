package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Crash and restart safety with the real binaries: ctld and noded killed
// with SIGKILL, a node stopped with SIGSTOP, the state file backed up and
// started from. See docs/operations.md.

// stormScript is what every storm submit runs; a stored job must carry
// exactly this (a half-written record would not).
const stormScript = "#!/bin/sh\ntrue\n"

// kill -9 of ctld while 16 clients submit 2,000 jobs, and a restart while
// they go on: every acknowledged job is there, exactly once and under the
// ID it was acknowledged with, on either side of the crash. A submit
// may commit and then lose its answer with the process (the client sees
// an error, the job exists): such jobs are allowed, but only complete and
// only once.
func TestCtldKill9DuringSubmitStorm(t *testing.T) {
	c := StartCluster(t, ClusterOpts{NoNodes: true})
	const clients, perClient, killAt = 16, 125, 1000
	var (
		mu    sync.Mutex
		acked = map[uint64]string{} // ID -> name
		tried = map[string]bool{}
	)
	reached := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewClient(c.Socket) // one connection pool per client
			for i := range perClient {
				name := fmt.Sprintf("storm-%d-%d", g, i)
				mu.Lock()
				tried[name] = true
				mu.Unlock()
				spec := api.JobSpec{Name: name, Script: stormScript, CPUs: 1, MemBytes: 1 << 20, WorkDir: "/tmp"}
				id, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: spec})
				if err != nil {
					// The controller died under us, or is not back yet: not
					// acknowledged. The storm goes on against the restart.
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				if prev, dup := acked[id]; dup {
					t.Errorf("ID %d acknowledged twice: %s and %s", id, prev, name)
				}
				acked[id] = name
				if len(acked) >= killAt {
					once.Do(func() { close(reached) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatal("the storm did not reach 1,000 acknowledged submits in 60s")
	}
	c.KillCtld() // submits are in flight
	c.StartCtld()
	wg.Wait()

	jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]api.Job{}
	byID := map[uint64]api.Job{}
	var maxID uint64
	for _, j := range jobs {
		byName[j.Name] = append(byName[j.Name], j)
		if _, dup := byID[j.ID]; dup {
			t.Errorf("job ID %d listed twice", j.ID)
		}
		byID[j.ID] = j
		maxID = max(maxID, j.ID)
	}
	for id, name := range acked {
		j, ok := byID[id]
		if !ok || j.Name != name {
			t.Errorf("acknowledged job %d (%s) lost or changed: got %q", id, name, j.Name)
		}
	}
	unacked := 0
	for name, js := range byName {
		if len(js) != 1 {
			t.Errorf("submit %s stored %d times", name, len(js))
		}
		j := js[0]
		if acked[j.ID] == name {
			continue
		}
		unacked++
		// Committed but its answer died with the controller: it must be a
		// whole job, one that was really submitted.
		if !tried[name] || j.State != api.StatePending || len(j.History) == 0 || j.SubmitTime.IsZero() ||
			j.Spec.Script != stormScript || j.User == "" {
			t.Errorf("job %d (%s) was never acknowledged and is not a complete record: %+v", j.ID, name, j)
		}
	}
	t.Logf("%d submits tried, %d acknowledged (before and after the kill -9), %d stored (%d committed without an answer)",
		len(tried), len(acked), len(jobs), unacked)
	spec := api.JobSpec{Name: "after", Script: stormScript, CPUs: 1, MemBytes: 1 << 20, WorkDir: "/tmp"}
	next, err := c.Client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
	if err != nil || next <= maxID {
		t.Fatalf("first submit after the restart: ID %d, %v; want an ID above %d", next, err, maxID)
	}
}

// endJobsAtCleanup cancels every job still active when the test ends and
// waits for the ends, before the cluster stops: a stopping noded leaves
// its jobs running under their shims, and a failed test must not leave
// jobs behind to collide with the next one. Register it after
// StartCluster (and after anything that must happen first, like SIGCONT).
func (c *Cluster) endJobsAtCleanup() {
	c.t.Cleanup(func() {
		ctx := context.Background()
		jobs, err := c.Client.Jobs(ctx, api.JobFilter{})
		if err != nil || len(jobs) == 0 {
			return
		}
		var ids []uint64
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		c.Client.Cancel(ctx, api.CancelRequest{IDs: ids})
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if left, err := c.Client.Jobs(ctx, api.JobFilter{}); err != nil || len(left) == 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// killNode SIGKILLs node i's daemon (its shims live on) and forgets it.
func (c *Cluster) killNode(i int) {
	c.t.Helper()
	cmd := c.nodes[i]
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	c.nodes = slices.Delete(c.nodes, i, i+1)
}

// waitFile waits until path contains want.
func waitFile(t *testing.T, path, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q within %s (has %q)", path, want, timeout, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill -9 of noded with jobs running: the jobs run on under their shims, a
// restarted noded reattaches to them, and their ends (exit code, usage)
// reach ctld; a cancel reaches a reattached job.
func TestNodedKill9Reattaches(t *testing.T) {
	node := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{node}})
	c.endJobsAtCleanup()
	dir := jobDir(t)
	// Each job writes marks to its own file (not its output, which a shim
	// owns); the first ends by itself with code 7, the second is cancelled.
	ends := c.Submit(dir, "-c", "1", "--wrap", "echo begin >> "+dir+"/ends.marks; sleep 3; echo done >> "+dir+"/ends.marks; exit 7")
	cancelled := c.Submit(dir, "-c", "1", "--wrap", "trap 'echo gone >> "+dir+"/cancel.marks; exit 0' TERM; echo begin >> "+dir+"/cancel.marks; sleep 120 & wait")
	waitFile(t, filepath.Join(dir, "ends.marks"), "begin", 20*time.Second)
	waitFile(t, filepath.Join(dir, "cancel.marks"), "begin", 20*time.Second)

	c.killNode(0)
	time.Sleep(500 * time.Millisecond) // the jobs run with no noded at all
	c.StartNode(node)
	c.WaitNodesUp(1, 15*time.Second)

	j := c.WaitEnded(ends, 30*time.Second)
	if j.State != api.StateFailed || j.ExitCode == nil || *j.ExitCode != 7 || j.PeakMemBytes <= 0 || j.EndTime == nil {
		t.Fatalf("job %d after the noded restart: %s exit %v peak mem %d; want FAILED, exit 7, usage recorded",
			ends, j.State, j.ExitCode, j.PeakMemBytes)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ends.marks")); string(b) != "begin\ndone\n" {
		t.Fatalf("the job did not run undisturbed through the noded kill: marks %q", b)
	}
	if st := c.Job(cancelled).State; st != api.StateRunning {
		t.Fatalf("job %d is %s after the noded restart, want RUNNING (reattached)", cancelled, st)
	}
	if r := c.Corral("cancel", fmt.Sprint(cancelled)); r.Code != 0 {
		t.Fatalf("cancel: %d %s", r.Code, r.Stderr)
	}
	if j := c.WaitEnded(cancelled, 20*time.Second); j.State != api.StateCancelled {
		t.Fatalf("reattached job %d ended %s after cancel, want CANCELLED", cancelled, j.State)
	}
	waitFile(t, filepath.Join(dir, "cancel.marks"), "gone", 5*time.Second)
	if l := c.Logs("noded-n1"); !strings.Contains(l, "reattaching") {
		t.Fatalf("noded log does not show the reattach:\n%s", l)
	}
}

// A noded that stops (SIGSTOP) is marked DOWN after the node timeout: a
// --no-requeue job ends NODE_FAIL, a --requeue job goes back to PENDING
// and waits (even with another node idle) until the old run is gone. When
// the node returns (SIGCONT) it is told to kill both leftovers; only then
// does the requeued job run again: it never runs twice at once.
func TestNodeLossNodeFailAndRequeue(t *testing.T) {
	n1 := NodeOpts{Name: "n1", CPUs: 2, Mem: "2G"}
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{n1}})
	dir := jobDir(t)
	job := func(name string) string { // marks: "begin R" / "gone R" per run R
		f := filepath.Join(dir, name+".marks")
		return "trap 'echo gone ${SLURM_RESTART_COUNT:-0} >> " + f + "; exit 0' TERM; echo begin ${SLURM_RESTART_COUNT:-0} >> " + f + "; sleep 120 & wait"
	}
	failed := c.Submit(dir, "-c", "1", "--no-requeue", "--wrap", job("failed"))
	again := c.Submit(dir, "-c", "1", "--requeue", "--wrap", job("again"))
	waitFile(t, filepath.Join(dir, "failed.marks"), "begin 0", 20*time.Second)
	waitFile(t, filepath.Join(dir, "again.marks"), "begin 0", 20*time.Second)
	c.StartNode(NodeOpts{Name: "n2", CPUs: 2, Mem: "2G"}) // idle: the requeued job could go there
	c.WaitNodesUp(2, 15*time.Second)

	stopped := c.nodes[0]
	if err := stopped.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.endJobsAtCleanup()                                              // then this
	t.Cleanup(func() { _ = stopped.Process.Signal(syscall.SIGCONT) }) // first this
	if j := c.WaitEnded(failed, 20*time.Second); j.State != api.StateNodeFail {
		t.Fatalf("--no-requeue job %d ended %s, want NODE_FAIL", failed, j.State)
	}
	j := c.WaitJob(again, 5*time.Second, "requeued", func(j *api.Job) bool { return j.Restarts == 1 })
	if j.State != api.StatePending || len(j.Runs) != 1 || j.Runs[0].State != api.StateNodeFail {
		t.Fatalf("--requeue job %d: %s restarts %d runs %+v; want PENDING after one NODE_FAIL run", again, j.State, j.Restarts, j.Runs)
	}
	nodes, err := c.Client.Nodes(context.Background())
	if err != nil || len(nodes) != 2 || nodes[0].State != api.NodeDown || nodes[1].State == api.NodeDown {
		t.Fatalf("nodes while n1 is stopped: %+v, %v", nodes, err)
	}
	// Its old run may still be going on the stopped node: it must not
	// start on n2 meanwhile.
	time.Sleep(3 * time.Second)
	if j := c.Job(again); j.State != api.StatePending {
		t.Fatalf("requeued job %d is %s on %v while its old run may live on the stopped node", again, j.State, j.Nodes)
	}

	if err := stopped.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "failed.marks"), "gone 0", 20*time.Second) // leftover killed
	c.WaitState(again, api.StateRunning, 30*time.Second)
	waitFile(t, filepath.Join(dir, "again.marks"), "begin 1", 20*time.Second)
	if b, _ := os.ReadFile(filepath.Join(dir, "again.marks")); !strings.HasPrefix(string(b), "begin 0\ngone 0\nbegin 1\n") {
		t.Fatalf("runs of the requeued job overlapped or repeated: marks %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "failed.marks")); string(b) != "begin 0\ngone 0\n" {
		t.Fatalf("the NODE_FAIL job ran again: marks %q", b)
	}
	if j := c.Job(failed); j.State != api.StateNodeFail {
		t.Fatalf("the NODE_FAIL job's record changed to %s when its leftover ended", j.State)
	}
	c.Corral("cancel", fmt.Sprint(again))
	c.WaitEnded(again, 20*time.Second)
}

// corral admin backup writes a consistent copy while ctld runs (and
// submits go on); corral-ctld --check passes it; a controller started on
// a fresh state directory holding only the copy has the same jobs.
func TestBackupAndStartFromIt(t *testing.T) {
	c := StartCluster(t, ClusterOpts{NoNodes: true})
	dir := jobDir(t)
	var ids []uint64
	for i := range 20 {
		ids = append(ids, c.Submit(dir, "-J", fmt.Sprintf("keep%d", i), "--wrap", "true"))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // load while the copy is taken; these may or may not be in it
		defer close(done)
		spec := api.JobSpec{Name: "during", Script: stormScript, CPUs: 1, MemBytes: 1 << 20, WorkDir: "/tmp"}
		for {
			select {
			case <-stop:
				return
			default:
				c.Client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
			}
		}
	}()
	backup := filepath.Join(c.Dir, "backup.db")
	r := c.Corral("admin", "backup", backup)
	close(stop)
	<-done
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "wrote "+backup+": ") {
		t.Fatalf("corral admin backup: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := c.Corral("admin", "backup"); r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("backup without FILE: %d %q", r.Code, r.Stderr)
	}
	if r := c.Corral("admin", "backup", filepath.Join(c.Dir, "no", "such", "dir", "b.db")); r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("backup into a missing directory: %d %q", r.Code, r.Stderr)
	}

	fresh := StartCluster(t, ClusterOpts{NoNodes: true})
	fresh.KillCtld()
	state := filepath.Join(fresh.Dir, "ctld")
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "ctld.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(binDir, "corral-ctld"), "--check", "--state", state).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is sound") {
		t.Fatalf("corral-ctld --check on the copy: %v %s", err, out)
	}
	fresh.StartCtld()
	restored, err := fresh.Client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := c.Client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	origByID := map[uint64]api.Job{}
	for _, j := range orig {
		origByID[j.ID] = j
	}
	got := map[uint64]bool{}
	for i, j := range restored {
		o, ok := origByID[j.ID]
		if !ok || o.Name != j.Name || o.Spec.Script != j.Spec.Script {
			t.Fatalf("restored job %d (%s) is not the original's", j.ID, j.Name)
		}
		if i > 0 && j.ID != restored[i-1].ID+1 {
			t.Fatalf("restored IDs have a gap: %d after %d (not a consistent copy)", j.ID, restored[i-1].ID)
		}
		got[j.ID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Fatalf("job %d, submitted before the backup, is not in the copy", id)
		}
	}
	t.Logf("copy holds %d of %d jobs (the rest were submitted during or after it)", len(restored), len(orig))

	// A damaged copy is refused with one clear line.
	fresh.KillCtld()
	clear(data[:2*os.Getpagesize()])
	os.WriteFile(filepath.Join(state, "ctld.db"), data, 0o600)
	out, err = exec.Command(filepath.Join(binDir, "corral-ctld"), "--state", state, "--socket", fresh.Socket,
		"--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "state file is damaged") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("ctld on a damaged file: %v %q", err, out)
	}
}
