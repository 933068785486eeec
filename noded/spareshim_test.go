package noded

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// sparePid waits for noded's spare shim other than not and returns its PID.
func sparePid(t *testing.T, n *node, not int) int {
	t.Helper()
	pid := 0
	if !containertest.Eventually(20*time.Second, func() bool {
		n.d.mu.Lock()
		defer n.d.mu.Unlock()
		if n.d.spare != nil && n.d.spare.cmd.Process.Pid != not {
			pid = n.d.spare.cmd.Process.Pid
		}
		return pid != 0
	}) {
		t.Fatal("no spare shim started")
	}
	return pid
}

// TestSpareShim: with Config.SpareShim a launch hands its job to the
// shim started ahead, which runs it as any shim does (its output in the
// job's files, its end reported) and is recognised as the job's live
// shim by its start time although its command line names no job; the
// next spare starts once the job runs; a spare left when noded stops
// ends with it.
func TestSpareShim(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "", func(c *Config) { c.SpareShim = true })
	spare := sparePid(t, n, 0)
	req := n.launchReq("echo from the spare $CORRAL_JOB_ID; exec sleep 1000\n")
	n.launch(t, req)
	ctld.Started(req.JobID)
	dir := filepath.Join(n.d.jobsDir, formatUint(req.JobID))
	if pid, start, err := shim.ReadPidFile(filepath.Join(dir, shim.PidFile)); err != nil || pid != spare || start == 0 {
		t.Fatalf("shim.pid: PID %d, start %d (%v); want the spare's PID %d and its start time", pid, start, err, spare)
	}
	if got := shimPid(dir); got != spare {
		t.Errorf("shimPid = %d, want the spare %d taken for the job's live shim", got, spare)
	}
	start, _ := shim.ProcStart(spare)
	reused := filepath.Join(t.TempDir(), "shim.pid")
	if err := os.WriteFile(reused, fmt.Appendf(nil, "%d %d\n", spare, start+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := livePid(reused, "\x00"+dir+"\x00"); got != 0 {
		t.Errorf("livePid of a file naming the spare's PID with another start time = %d, want 0 (a reused PID)", got)
	}
	next := sparePid(t, n, spare)

	out := filepath.Join(n.work, fmt.Sprintf("corral-%d.out", req.JobID))
	want := fmt.Sprintf("from the spare %d\n", req.JobID)
	if !containertest.Eventually(20*time.Second, func() bool { got, _ := os.ReadFile(out); return string(got) == want }) {
		got, _ := os.ReadFile(out)
		t.Errorf("output %q, want %q", got, want)
	}
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: req.JobID}, nil); err != nil {
		t.Fatal(err)
	}
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCancelled {
		t.Errorf("ended %+v, want CANCELLED", ev)
	}
	n.stop()
	if err := syscall.Kill(next, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the unused spare %d outlived noded (kill 0: %v)", next, err)
	}
}
