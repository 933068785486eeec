package noded

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// fakeShim writes a COMPLETED result, says shim.EndedLine and then, like
// a shim deleting a large /tmp, stays until the file release exists.
const fakeShim = `[ "$1" = ` + shim.FeaturesArg + ` ] && exit 0
dir=$1
printf '{"state":"COMPLETED","exit_code":0,"end":"%s"}' "$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)" > "$dir/` + shim.ResultFile + `"
echo ` + shim.EndedLine + ` >&4
while [ ! -e "$RELEASE" ]; do sleep 0.02; done
`

// TestEndReportedBeforeShimExits: the end reaches ctld and the cores are
// free while the shim still tidies up; the job directory stays (and the
// job is listed) until the shim exits, and a relaunch of the same job
// waits for it instead of failing on the leftover directory.
func TestEndReportedBeforeShimExits(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	t.Setenv("RELEASE", release)
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "", func(c *Config) { c.ShimCommand = []string{"/bin/sh", "-c", fakeShim, "fake-shim"} })
	req := n.launchReq("true\n")
	n.launch(t, req)
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCompleted {
		t.Fatalf("ended event %+v", ev)
	}
	dir := filepath.Join(n.d.StateDir(), "jobs", strconv.FormatUint(req.JobID, 10))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the job directory went before the shim exited: %v", err)
	}
	// Listed while its shim tidies up, so that ctld does not relaunch a
	// requeued job here meanwhile.
	if ids := n.jobs(t); len(ids) != 1 || ids[0] != req.JobID {
		t.Errorf("jobs listed while the shim tidies up: %v, want [%d]", ids, req.JobID)
	}
	n.d.mu.Lock()
	free := n.d.cpus.free()
	n.d.mu.Unlock()
	if free != 2 {
		t.Errorf("%d free CPUs after the end was reported, want 2", free)
	}

	// ctld relaunches a job (a requeue) only after it took the end.
	if !containertest.Eventually(5*time.Second, func() bool { return n.d.q.Len() == 0 }) {
		t.Fatal("the end event was never acknowledged")
	}
	type answer struct {
		at  time.Time
		err error
	}
	relaunched := make(chan answer, 1)
	req.Restarts, req.Start = req.Restarts+1, req.Start.Add(time.Second) // the requeued job's next run
	go func() {
		err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", req, nil)
		relaunched <- answer{time.Now(), err}
	}()
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-relaunched:
		if a.err != nil {
			t.Fatalf("relaunch: %v", a.err)
		}
		if a.at.Before(released) {
			t.Errorf("the relaunch returned at %v, before the first run's shim was released at %v", a.at, released)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the relaunch did not return")
	}
	ctld.WaitFor("the relaunched run's end", func(f *nodedtest.FakeCtld) bool {
		ends := 0
		for _, ev := range f.Events {
			if ev.JobID == req.JobID && ev.Kind == api.EventEnded {
				ends++
			}
		}
		return ends == 2
	})
	mustNoJobDirs(t, n)
	if ids := n.jobs(t); len(ids) != 0 {
		t.Errorf("jobs listed once both runs are gone: %v", ids)
	}
}

// TestShimKilledMidJob: a shim that dies with its job running (kill -9)
// ends the job FAILED, and noded removes what the shim left: the
// container, its cgroups, its root mount and the job directory.
func TestShimKilledMidJob(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("sleep 100\n")
	n.launch(t, req)
	ctld.Started(req.JobID)
	dir := filepath.Join(n.d.StateDir(), "jobs", strconv.FormatUint(req.JobID, 10))
	pid := shimPid(dir)
	if pid == 0 {
		t.Fatal("no live shim for the running job")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ev := ctld.Ended(req.JobID)
	if ev.State != api.StateFailed || !strings.Contains(ev.Message, "without a result") {
		t.Errorf("ended %+v, want FAILED: supervisor ended without a result", ev)
	}
	mustNoJobDirs(t, n)
}
