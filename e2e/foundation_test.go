package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// startDev runs `corral dev` in the foreground as a user would and returns
// its socket once it says the cluster is ready.
func startDev(t *testing.T, args ...string) string {
	t.Helper()
	needRoot(t)
	dir := shortTempDir(t)
	socket := filepath.Join(dir, "ctld.sock")
	cmd := exec.Command(filepath.Join(binDir, "corral"),
		append([]string{"dev", "--state", filepath.Join(dir, "state"), "--socket", socket}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, _ := os.Create(filepath.Join(dir, "dev.log"))
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil && !t.Failed() {
				t.Errorf("corral dev did not exit cleanly on SIGTERM: %v", err)
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("corral dev did not stop within 20s of SIGTERM")
		}
	})
	ready := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if strings.Contains(s.Text(), "ready") {
				ready <- s.Text()
			}
		}
	}()
	select {
	case line := <-ready:
		if !strings.Contains(line, socket) {
			t.Fatalf("corral dev ready line %q does not name the socket %s", line, socket)
		}
	case <-time.After(30 * time.Second):
		b, _ := os.ReadFile(filepath.Join(dir, "dev.log"))
		t.Fatalf("corral dev not ready within 30s:\n%s", b)
	}
	return socket
}

// Seed 000/001 on CPUs: three one-CPU jobs on two CPUs, the third waits for
// Resources and starts as soon as a running one is cancelled.
func TestSeedQueueOnTwoCPUs(t *testing.T) {
	socket := startDev(t, "--cpus", "2", "--mem", "2G")
	c := &Cluster{t: t, Socket: socket, Client: api.NewClient(socket)}
	dir := jobDir(t)
	var ids []uint64
	for i := 0; i < 3; i++ {
		ids = append(ids, c.Submit(dir, "-c", "1", "-J", "seed"+strconv.Itoa(i), "--wrap", "sleep 60"))
	}
	// Within 1 s: two RUNNING, one PENDING (Resources).
	deadline := time.Now().Add(time.Second)
	var running, pending []uint64
	for {
		running, pending = nil, nil
		for _, id := range ids {
			j := c.Job(id)
			switch {
			case j.State == api.StateRunning:
				running = append(running, id)
			case j.State == api.StatePending && j.Reason == api.ReasonResources:
				pending = append(pending, id)
			}
		}
		if len(running) == 2 && len(pending) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 1s: running %v, pending(Resources) %v; want 2 and 1\n%s", running, pending, c.Corral("queue").Stdout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	q := c.Corral("queue")
	if !strings.Contains(q.Stdout, "(Resources)") || strings.Count(q.Stdout, " R ") != 2 {
		t.Errorf("queue should show two R and one (Resources):\n%s", q.Stdout)
	}
	assertNodeCPUs(t, c, "2/2")

	if r := c.Corral("cancel", strconv.FormatUint(running[0], 10)); r.Code != 0 {
		t.Fatalf("cancel: %d %s", r.Code, r.Stderr)
	}
	c.WaitState(pending[0], api.StateRunning, time.Second)
	c.WaitState(running[0], api.StateCancelled, 5*time.Second)
	assertNodeCPUs(t, c, "2/2")

	if r := c.Corral("cancel", strconv.FormatUint(running[1], 10), strconv.FormatUint(pending[0], 10)); r.Code != 0 {
		t.Fatalf("cancel: %d %s", r.Code, r.Stderr)
	}
	for _, id := range ids {
		c.WaitState(id, api.StateCancelled, 5*time.Second)
	}
	assertNodeCPUs(t, c, "0/2")
}

func assertNodeCPUs(t *testing.T, c *Cluster, want string) {
	t.Helper()
	var out string
	for i := 0; i < 100; i++ {
		out = c.Corral("nodes").Stdout
		if strings.Contains(out, " "+want+" ") || strings.Contains(out, " "+want+"\t") || strings.Contains(out, " "+want+"\n") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("corral nodes should show CPUs %s:\n%s", want, out)
}

// Seed 002: the job reads its own limits from /sys/fs/cgroup.
func TestSeedJobSeesItsCgroupLimits(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	script := filepath.Join(dir, "limits.sh")
	writeFile(t, script, `#!/bin/sh
if [ -f /sys/fs/cgroup/memory.max ]; then
  echo "mem $(cat /sys/fs/cgroup/memory.max)"
  echo "quota $(cat /sys/fs/cgroup/cpu.max)"
  echo "cpuset $(cat /sys/fs/cgroup/cpuset.cpus.effective)"
else
  echo "mem $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
  echo "quota $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
  echo "cpuset $(cat /sys/fs/cgroup/cpuset/cpuset.cpus)"
fi
`)
	id := c.Submit(dir, "-c", "1", "--mem", "256M", "-o", "limits-%j.txt", script)
	j := c.WaitEnded(id, 30*time.Second)
	if j.State != api.StateCompleted {
		t.Fatalf("job ended %s (exit %v, %s)", j.State, j.ExitCode, j.Message)
	}
	lines := readLines(t, filepath.Join(dir, "limits-"+strconv.FormatUint(id, 10)+".txt"))
	got := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, " ")
		got[k] = v
	}
	if got["mem"] != "268435456" {
		t.Errorf("memory limit seen inside: %q, want 268435456 (256M)", got["mem"])
	}
	if q := got["quota"]; q != "100000 100000" && q != "100000" {
		t.Errorf("CPU quota seen inside: %q, want one CPU's worth (100000 per 100000)", q)
	}
	if cs := got["cpuset"]; cs == "" || strings.ContainsAny(cs, ",-") {
		t.Errorf("cpuset seen inside: %q, want exactly one CPU", cs)
	}
}

// A job over its memory ends OUT_OF_MEMORY; the job beside it is unaffected.
func TestOutOfMemory(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	hog := c.Submit(dir, "-c", "1", "--mem", "128M", "--wrap", "head -c 600M /dev/zero | tail")
	calm := c.Submit(dir, "-c", "1", "--mem", "128M", "--wrap", "sleep 2; echo calm")
	j := c.WaitEnded(hog, 60*time.Second)
	if j.State != api.StateOutOfMemory {
		t.Errorf("memory hog ended %s, want OUT_OF_MEMORY", j.State)
	}
	k := c.WaitEnded(calm, 30*time.Second)
	if k.State != api.StateCompleted || k.ExitCode == nil || *k.ExitCode != 0 {
		t.Errorf("job beside the hog ended %s exit %v, want COMPLETED 0", k.State, k.ExitCode)
	}
	out := readLines(t, filepath.Join(dir, "corral-"+strconv.FormatUint(calm, 10)+".out"))
	if len(out) != 1 || out[0] != "calm" {
		t.Errorf("calm job output %q", out)
	}
}

// kill -9 of ctld loses nothing: same IDs and states after restart, running
// jobs finish and are recorded, pending jobs start.
func TestCtldKill9KeepsEveryJob(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	var ids []uint64
	for i := 0; i < 4; i++ {
		ids = append(ids, c.Submit(dir, "-c", "1", "--wrap", "sleep 2"))
	}
	for _, id := range ids[:2] {
		c.WaitState(id, api.StateRunning, 2*time.Second)
	}
	before := map[uint64]api.JobState{}
	for _, id := range ids {
		before[id] = c.Job(id).State
	}
	c.KillCtld()
	c.StartCtld()
	for _, id := range ids {
		j := c.Job(id)
		if j.ID != id {
			t.Fatalf("job %d came back as %d", id, j.ID)
		}
		if j.State != before[id] && !(before[id] == api.StatePending && j.State == api.StateRunning) &&
			!(before[id] == api.StateRunning && j.State == api.StateCompleted) {
			t.Errorf("job %d was %s before the crash, %s after", id, before[id], j.State)
		}
	}
	for _, id := range ids {
		j := c.WaitEnded(id, 30*time.Second)
		if j.State != api.StateCompleted || j.StartTime == nil || j.EndTime == nil {
			t.Errorf("job %d ended %s (start %v end %v), want COMPLETED with times", id, j.State, j.StartTime, j.EndTime)
		}
	}
	// The ID sequence continues after the crash.
	next := c.Submit(dir, "--wrap", "true")
	if next != ids[len(ids)-1]+1 {
		t.Errorf("first job after restart got ID %d, want %d", next, ids[len(ids)-1]+1)
	}
	if j := c.WaitEnded(next, 30*time.Second); j.State != api.StateCompleted {
		t.Errorf("job %d after the restart ended %s, want COMPLETED", next, j.State)
	}
}

// Two node daemons on one host both receive jobs.
func TestTwoNodesOnOneHost(t *testing.T) {
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 1, Mem: "1G"}, {Name: "n2", CPUs: 1, Mem: "1G"}}})
	dir := jobDir(t)
	a := c.Submit(dir, "-c", "1", "--wrap", "sleep 30")
	b := c.Submit(dir, "-c", "1", "--wrap", "sleep 30")
	ja := c.WaitState(a, api.StateRunning, 5*time.Second)
	jb := c.WaitState(b, api.StateRunning, 5*time.Second)
	if len(ja.Nodes) != 1 || len(jb.Nodes) != 1 || ja.Nodes[0] == jb.Nodes[0] {
		t.Errorf("jobs should run on different nodes: %v and %v", ja.Nodes, jb.Nodes)
	}
	c.Corral("cancel", strconv.FormatUint(a, 10), strconv.FormatUint(b, 10))
	c.WaitEnded(a, 10*time.Second)
	c.WaitEnded(b, 10*time.Second)
}

// Bad input: one clear line, a non-zero exit, nothing created.
func TestBadInputIsRefused(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	empty := filepath.Join(dir, "empty.sh")
	writeFile(t, empty, "")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown option", []string{"submit", "--frobnicate", "--wrap", "true"}, "frobnicate"},
		{"malformed time", []string{"submit", "-t", "1:2:3:4", "--wrap", "true"}, "time"},
		{"malformed mem", []string{"submit", "--mem", "12Q", "--wrap", "true"}, "mem"},
		{"zero cpus", []string{"submit", "-c", "0", "--wrap", "true"}, "cpus"},
		{"negative cpus", []string{"submit", "-c", "-1", "--wrap", "true"}, "cpus"},
		{"empty script", []string{"submit", empty}, "empty"},
		{"missing script", []string{"submit", filepath.Join(dir, "nope.sh")}, "nope.sh"},
		{"larger than every node", []string{"submit", "-c", "64", "--wrap", "true"}, "64"},
		{"unknown partition", []string{"submit", "-p", "nosuch", "--wrap", "true"}, "nosuch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCorral(t, c.Socket, dir, tc.args...)
			if r.Code == 0 {
				t.Fatalf("exit 0, want non-zero; stdout %q", r.Stdout)
			}
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if len(lines) != 1 || !strings.Contains(strings.ToLower(lines[0]), tc.want) {
				t.Errorf("stderr should be one line mentioning %q, got:\n%s", tc.want, r.Stderr)
			}
		})
	}
	jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("refused submits created %d jobs", len(jobs))
	}
	r := runCorral(t, filepath.Join(dir, "no.sock"), dir, "queue")
	if r.Code == 0 || !strings.Contains(r.Stderr, "cannot reach") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("unreachable controller: exit %d stderr %q", r.Code, r.Stderr)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
