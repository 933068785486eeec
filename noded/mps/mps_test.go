package mps_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/noded/mps"
)

const (
	gpuA = "GPU-aaaaaaaa-0000-8000-8000-000000000000"
	gpuB = "GPU-bbbbbbbb-0000-8000-8000-000000000000"
)

// MustSupervisor runs the fake control program in a fresh directory and
// stops every daemon when the test ends.
func MustSupervisor(t *testing.T) (*mps.Supervisor, string) {
	t.Helper()
	fake, err := filepath.Abs("testdata/fake-nvidia-cuda-mps-control")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := mps.New(fake, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		// Nothing may outlive the test.
		for _, u := range []string{gpuA, gpuB} {
			if pid := daemonPid(s, u); pid > 0 {
				t.Errorf("daemon of %s (pid %d) still runs", u, pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return s, dir
}

// daemonPid is the fake daemon's PID while it runs, else 0.
func daemonPid(s *mps.Supervisor, uuid string) int {
	b, err := os.ReadFile(filepath.Join(s.ClientOf(uuid).PipeDir, "fake.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil && strings.Contains(string(st), "State:\tZ") {
		return 0 // killed, not yet reaped
	}
	return pid
}

// calls is what the fake logged for a GPU.
func calls(s *mps.Supervisor, uuid string) []string {
	b, _ := os.ReadFile(filepath.Join(s.ClientOf(uuid).LogDir, "fake.log"))
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " "))
}

func TestStartedOnFirstUseStoppedWhenIdle(t *testing.T) {
	s, dir := MustSupervisor(t)
	if daemonPid(s, gpuA) != 0 {
		t.Fatal("a daemon runs before any use")
	}
	c, err := s.Acquire(gpuA)
	if err != nil {
		t.Fatal(err)
	}
	if c.PipeDir != filepath.Join(dir, gpuA, "pipe") || c.LogDir != filepath.Join(dir, gpuA, "log") {
		t.Fatalf("client %+v", c)
	}
	if env := c.Env(); env[0] != "CUDA_MPS_PIPE_DIRECTORY="+c.PipeDir || env[1] != "CUDA_MPS_LOG_DIRECTORY="+c.LogDir {
		t.Fatalf("env %v", env)
	}
	pid := daemonPid(s, gpuA)
	if pid == 0 {
		t.Fatal("no daemon after the first use")
	}
	if got := calls(s, gpuA); len(got) != 2 || got[1] != "CUDA_VISIBLE_DEVICES="+gpuA {
		t.Fatalf("calls %v: want one start for the GPU alone", got)
	}
	// A second user of the same GPU shares the daemon; another GPU gets
	// its own.
	if _, err := s.Acquire(gpuA); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(gpuB); err != nil {
		t.Fatal(err)
	}
	if daemonPid(s, gpuA) != pid || len(calls(s, gpuA)) != 2 || daemonPid(s, gpuB) == 0 {
		t.Fatal("the second user started another daemon, or the other GPU got none")
	}
	if u := s.Users(); u[gpuA] != 2 || u[gpuB] != 1 {
		t.Fatalf("users %v", u)
	}
	if err := s.Release(gpuA); err != nil || daemonPid(s, gpuA) != pid {
		t.Fatalf("released one of two users: %v, daemon %d", err, daemonPid(s, gpuA))
	}
	if err := s.Release(gpuA); err != nil || daemonPid(s, gpuA) != 0 {
		t.Fatalf("released the last user: %v, daemon %d still runs", err, daemonPid(s, gpuA))
	}
	if got := calls(s, gpuA); got[len(got)-1] != "quit" {
		t.Fatalf("calls %v: want a quit at the end", got)
	}
	if err := s.Release(gpuA); err != nil {
		t.Fatalf("releasing an unused GPU: %v", err)
	}
}

func TestCheckRestartsADeadDaemon(t *testing.T) {
	s, _ := MustSupervisor(t)
	if _, err := s.Acquire(gpuA); err != nil {
		t.Fatal(err)
	}
	pid := daemonPid(s, gpuA)
	syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); daemonPid(s, gpuA) != 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // SIGKILL lands asynchronously
	}
	s.Check()
	if p := daemonPid(s, gpuA); p == 0 || p == pid {
		t.Fatalf("daemon %d after Check, want a new one", p)
	}
}

func TestStopIdleEndsLeftovers(t *testing.T) {
	s, dir := MustSupervisor(t)
	if _, err := s.Acquire(gpuA); err != nil {
		t.Fatal(err)
	}
	// A new supervisor (a restarted node daemon) finds gpuA's daemon
	// running with no user of its own.
	fake, _ := filepath.Abs("testdata/fake-nvidia-cuda-mps-control")
	s2, err := mps.New(fake, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s2.StopIdle()
	if daemonPid(s, gpuA) != 0 {
		t.Fatal("the leftover daemon still runs")
	}
	// Adopting starts it again for a job that outlived the old one.
	if err := s2.Adopt(gpuA); err != nil || daemonPid(s2, gpuA) == 0 {
		t.Fatalf("adopt: %v", err)
	}
	s2.StopIdle()
	if daemonPid(s2, gpuA) == 0 {
		t.Fatal("StopIdle stopped a daemon in use")
	}
	if err := s2.Close(); err != nil || daemonPid(s2, gpuA) != 0 {
		t.Fatalf("close: %v", err)
	}
}

func TestErrors(t *testing.T) {
	if _, err := mps.New("/nonexistent/nvidia-cuda-mps-control", t.TempDir(), nil); err == nil {
		t.Fatal("a missing control program accepted")
	}
	s, _ := MustSupervisor(t)
	for _, bad := range []string{"", "../etc", "GPU-a/b", "MIG-x"} {
		if _, err := s.Acquire(bad); err == nil {
			t.Errorf("Acquire(%q) accepted", bad)
		}
	}
	broken := filepath.Join(t.TempDir(), "control")
	os.WriteFile(broken, []byte("#!/bin/sh\necho no GPU here >&2\nexit 3\n"), 0o755)
	sb, err := mps.New(broken, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Acquire(gpuA); err == nil || !strings.Contains(err.Error(), "no GPU here") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a failing control program: %v", err)
	}
	if u := sb.Users(); len(u) != 0 {
		t.Fatalf("a failed start counted users %v", u)
	}
}
