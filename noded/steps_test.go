package noded

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// stepNode is a noded whose shim is the test binary's fake (no
// container; fakerunner_test.go), with one running job of nobody's.
func stepNode(t *testing.T, ctld *nodedtest.FakeCtld, stateDir string) (*node, api.LaunchRequest) {
	t.Helper()
	n := mustNode(t, ctld, stateDir, fakeShimConfig(t))
	req := n.launchReq("true\n")
	n.launch(t, req)
	// Before the noded stops (cleanups run last first): it waits for its jobs.
	t.Cleanup(func() { n.d.cancel(req.JobID, "the test is over") })
	ctld.Started(req.JobID)
	return n, req
}

func fakeShimConfig(t *testing.T) func(*Config) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.ShimCommand = []string{exe, fakeShimArg} }
}

// postStep sends a launch as srun does: unsigned, the credential inside.
func postStep(t *testing.T, addr string, body any) (int, string) {
	t.Helper()
	return postStepTo(t, http.DefaultClient, "http://"+addr, body)
}

func postStepTo(t *testing.T, hc *http.Client, base string, body any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Post(base+"/v1/steps", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

func (n *node) launchStep(t *testing.T, job uint64, step int, argv ...string) {
	t.Helper()
	launchStepAt(t, n.d.Addr(), n.d.Name(), job, step, argv...)
}

func launchStepAt(t *testing.T, addr, name string, job uint64, step int, argv ...string) {
	t.Helper()
	l := nodedtest.StepLaunch(testKey, name, job, step, containertest.Nobody, time.Minute, argv...)
	if code, msg := postStep(t, addr, l); code != http.StatusOK {
		t.Fatalf("launch of step %d.%d: %d %s", job, step, code, msg)
	}
}

func stepDir(state string, job uint64, step int) string {
	return filepath.Join(state, "jobs", formatUint(job), shim.StepsDir, strconv.Itoa(step))
}

// runnerStarts is how often a runner of the step started.
func runnerStarts(state string, job uint64, step int) int {
	b, _ := os.ReadFile(filepath.Join(stepDir(state, job, step), "starts"))
	return strings.Count(string(b), "\n")
}

func waitRunner(t *testing.T, state string, job uint64, step int) {
	t.Helper()
	if !containertest.Eventually(10*time.Second, func() bool { return runnerStarts(state, job, step) > 0 }) {
		t.Fatalf("the runner of step %d.%d never started", job, step)
	}
}

// release lets a "wait" step's fake runner end.
func release(t *testing.T, state string, job uint64, step int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(stepDir(state, job, step), "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (n *node) steps(t *testing.T) []api.NodeStep {
	t.Helper()
	var out []api.NodeStep
	if err := n.client.Do(context.Background(), http.MethodGet, "/v1/steps", nil, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStepLaunchRefusals: a launch without a valid credential for this
// node, the job's user and a job running here is refused with a clear
// status and starts nothing; the credential route opens no signed one.
func TestStepLaunchRefusals(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n, job := stepNode(t, ctld, "")
	name, nobody := n.d.Name(), uint32(containertest.Nobody)
	good := func() api.StepLaunch {
		return nodedtest.StepLaunch(testKey, name, job.JobID, 0, nobody, time.Minute, "exit", "0")
	}
	for _, tc := range []struct {
		name string
		l    func() api.StepLaunch
		code int
		msg  string
	}{
		{"a forged signature", func() api.StepLaunch { l := good(); l.Credential.Sig = strings.Repeat("0", 64); return l }, 403, "bad signature"},
		{"another cluster's key", func() api.StepLaunch {
			return nodedtest.StepLaunch([]byte("another key, 32 bytes long......"), name, job.JobID, 0, nobody, time.Minute, "true")
		}, 403, "bad signature"},
		{"a uid changed after signing", func() api.StepLaunch { l := good(); l.Credential.UID = 0; return l }, 403, "bad signature"},
		{"another node", func() api.StepLaunch {
			return nodedtest.StepLaunch(testKey, "elsewhere", job.JobID, 0, nobody, time.Minute, "true")
		}, 403, "not for node"},
		{"an expired credential", func() api.StepLaunch {
			return nodedtest.StepLaunch(testKey, name, job.JobID, 0, nobody, -time.Second, "true")
		}, 403, "expired"},
		{"another user", func() api.StepLaunch {
			return nodedtest.StepLaunch(testKey, name, job.JobID, 0, 0, time.Minute, "true")
		}, 403, "runs as uid"},
		{"a job not on this node", func() api.StepLaunch {
			return nodedtest.StepLaunch(testKey, name, 999999, 0, nobody, time.Minute, "true")
		}, 404, "does not run on node"},
		{"the batch step", func() api.StepLaunch {
			return nodedtest.StepLaunch(testKey, name, job.JobID, api.StepBatch, nobody, time.Minute, "true")
		}, 400, "not an srun step"},
		{"no command", func() api.StepLaunch { return nodedtest.StepLaunch(testKey, name, job.JobID, 0, nobody, time.Minute) }, 400, "no command"},
		{"a relative directory", func() api.StepLaunch { l := good(); l.Cwd = "work"; return l }, 400, "not absolute"},
		{"a bad I/O address", func() api.StepLaunch { l := good(); l.IOAddr = "srun"; return l }, 400, "io_addr"},
	} {
		code, msg := postStep(t, n.d.Addr(), tc.l())
		if code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, msg, tc.code, tc.msg)
		}
	}
	if code, msg := postStep(t, n.d.Addr(), map[string]any{"credential": good().Credential, "bogus": 1}); code != 400 {
		t.Errorf("an unknown field: %d %s, want 400", code, msg)
	}
	huge := good()
	huge.Env = []string{"X=" + strings.Repeat("x", maxBody)}
	if code, msg := postStep(t, n.d.Addr(), huge); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a launch over the body limit: %d %s, want 413", code, msg)
	}
	// The cluster's own routes, those under /v1/steps too, still want
	// ctld's signature.
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/v1/steps"}, {http.MethodPost, "/v1/steps/cancel"}, {http.MethodPost, "/v1/launch"}, {http.MethodGet, "/v1/jobs"},
	} {
		req, _ := http.NewRequest(r.method, "http://"+n.d.Addr()+r.path, strings.NewReader(`{"job_id":1,"step_id":0}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("unsigned %s %s: %d, want 401", r.method, r.path, resp.StatusCode)
		}
	}
	if _, err := os.Stat(filepath.Join(n.d.StateDir(), "jobs", formatUint(job.JobID), shim.StepsDir)); !os.IsNotExist(err) {
		t.Errorf("refused launches left a steps directory (%v)", err)
	}
	if s := n.steps(t); len(s) != 0 {
		t.Errorf("steps after refused launches: %v", s)
	}
}

// TestStepLaunchedOnceAndEndReported: a launch sent several times at once
// starts one runner, which gets this node's part of the step; its end
// reaches ctld with the step's ID and exit code, and a launch after the
// end starts nothing. A runner that dies without a result ends the step
// FAILED, saying so.
func TestStepLaunchedOnceAndEndReported(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n, job := stepNode(t, ctld, "")
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { n.launchStep(t, job.JobID, 3, "wait", "7") })
	}
	wg.Wait()
	waitRunner(t, n.d.StateDir(), job.JobID, 3)
	if got := n.steps(t); !reflect.DeepEqual(got, []api.NodeStep{{JobID: job.JobID, StepID: 3}}) {
		t.Errorf("GET /v1/steps = %+v while the step runs", got)
	}
	b, err := os.ReadFile(filepath.Join(stepDir(n.d.StateDir(), job.JobID, 3), shim.StepFile))
	if err != nil {
		t.Fatal(err)
	}
	var sj shim.StepJob
	if err := json.Unmarshal(b, &sj); err != nil {
		t.Fatal(err)
	}
	if sj.Node != n.d.Name() || sj.NodeID != 0 || !reflect.DeepEqual(sj.Ranks, []int{0}) || sj.LaunchNodeIP != "127.0.0.1" ||
		!reflect.DeepEqual(sj.Launch.Argv, []string{"wait", "7"}) {
		t.Errorf("step.json %+v", sj)
	}
	release(t, n.d.StateDir(), job.JobID, 3)
	ev := ctld.StepEnded(job.JobID, 3)
	if ev.ExitCode != 7 || ev.State != api.StateFailed || ev.Node != n.d.Name() || ev.Time.IsZero() {
		t.Errorf("step end %+v, want exit code 7, FAILED, from %s", ev, n.d.Name())
	}
	live := func() bool {
		return slices.ContainsFunc(n.steps(t), func(s api.NodeStep) bool { return !s.Ended })
	}
	if !containertest.Eventually(10*time.Second, func() bool { return !live() }) {
		t.Fatal("the runner is still listed after its end")
	}
	// A runner is listed before the launch is answered: none is now.
	n.launchStep(t, job.JobID, 3, "wait", "7") // after its end: a retry, nothing runs
	if live() {
		t.Errorf("a launch after the step's end started a runner: %+v", n.steps(t))
	}
	if got := runnerStarts(n.d.StateDir(), job.JobID, 3); got != 1 {
		t.Errorf("%d runners started for one step, want 1", got)
	}

	n.launchStep(t, job.JobID, 0, "exit", "0")
	if ev := ctld.StepEnded(job.JobID, 0); ev.State != api.StateCompleted || ev.ExitCode != 0 {
		t.Errorf("step 0 ended %+v, want COMPLETED", ev)
	}
	n.launchStep(t, job.JobID, 1, "die")
	if ev := ctld.StepEnded(job.JobID, 1); ev.State != api.StateFailed || !strings.Contains(ev.Message, "without a result") {
		t.Errorf("step of a crashed runner ended %+v, want FAILED, without a result", ev)
	}
	n.cancelJob(t, job.JobID)
	ctld.Ended(job.JobID)
	mustNoJobDirs(t, n)
}

func (n *node) cancelJob(t *testing.T, id uint64) {
	t.Helper()
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: id}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestStepCancelAndJobEnd: ctld's cancel of a step ends that step alone
// (CANCELLED, its tasks killed); the end of the job ends its running
// steps, reported before the job's own end, and refuses new ones.
func TestStepCancelAndJobEnd(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n, job := stepNode(t, ctld, "")
	n.launchStep(t, job.JobID, 0, "wait", "0")
	n.launchStep(t, job.JobID, 1, "wait", "0")
	waitRunner(t, n.d.StateDir(), job.JobID, 0)
	waitRunner(t, n.d.StateDir(), job.JobID, 1)
	for range 2 { // idempotent, an unknown step too
		for _, id := range []int{0, 9} {
			if err := n.client.Do(context.Background(), http.MethodPost, "/v1/steps/cancel", api.StepCancelRequest{JobID: job.JobID, StepID: id}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ev := ctld.StepEnded(job.JobID, 0); ev.State != api.StateCancelled || ev.Signal != int(syscall.SIGKILL) {
		t.Errorf("cancelled step ended %+v, want CANCELLED by SIGKILL", ev)
	}
	if got := n.steps(t); len(got) == 0 || got[len(got)-1] != (api.NodeStep{JobID: job.JobID, StepID: 1}) {
		t.Errorf("steps after cancelling step 0: %+v, want step 1 running", got)
	}
	// A launch that arrives after ctld cancelled its step starts nothing.
	if code, msg := postStep(t, n.d.Addr(), nodedtest.StepLaunch(testKey, n.d.Name(), job.JobID, 9, containertest.Nobody, time.Minute, "true")); code != http.StatusConflict || !strings.Contains(msg, "cancelled") {
		t.Errorf("launch of a cancelled step: %d %s, want 409", code, msg)
	}

	n.cancelJob(t, job.JobID)
	ctld.Ended(job.JobID)
	if ev := ctld.StepEnded(job.JobID, 1); ev.State != api.StateCancelled {
		t.Errorf("step of an ended job: %+v, want CANCELLED", ev)
	}
	kinds := ctld.Kinds(job.JobID)
	if want := []api.JobEventKind{api.EventStarted, api.EventStepEnded, api.EventStepEnded, api.EventEnded}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("events %v, want %v (steps end before their job)", kinds, want)
	}
	if code, msg := postStep(t, n.d.Addr(), nodedtest.StepLaunch(testKey, n.d.Name(), job.JobID, 2, containertest.Nobody, time.Minute, "true")); code != http.StatusConflict {
		t.Errorf("a step in an ended job: %d %s, want 409", code, msg)
	}
	mustNoJobDirs(t, n)
}

// TestStepLaunchOverTLS: with a TLS node plane, srun (a client with the
// cluster CA and no key) launches a step; the signed routes stay closed
// to it.
func TestStepLaunchOverTLS(t *testing.T) {
	ctld := nodedtest.NewFakeCtldTLS(t, testKey)
	n := mustNode(t, ctld, "", fakeShimConfig(t), func(c *Config) { c.CAFile = ctld.CAFile() })
	pool, err := api.LoadCAPool(ctld.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	base := "https://" + n.d.Addr()
	n.client = api.NewNodeClientTLS(base, testKey, 10*time.Second, api.ClientTLS(pool))
	req := n.launchReq("true\n")
	n.launch(t, req)
	t.Cleanup(func() { n.d.cancel(req.JobID, "the test is over") })
	ctld.Started(req.JobID)

	srun := &http.Client{Transport: &http.Transport{TLSClientConfig: api.ClientTLS(pool)}}
	l := nodedtest.StepLaunch(testKey, n.d.Name(), req.JobID, 0, containertest.Nobody, time.Minute, "wait", "0")
	if code, msg := postStepTo(t, srun, base, l); code != http.StatusOK {
		t.Fatalf("step launch over TLS: %d %s", code, msg)
	}
	waitRunner(t, n.d.StateDir(), req.JobID, 0)
	resp, err := srun.Get(base + "/v1/steps")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned GET /v1/steps over TLS: %d, want 401", resp.StatusCode)
	}
	if code, _ := postStep(t, n.d.Addr(), l); code == http.StatusOK {
		t.Error("a plaintext launch to the TLS node plane was accepted")
	}
	release(t, n.d.StateDir(), req.JobID, 0)
	if ev := ctld.StepEnded(req.JobID, 0); ev.State != api.StateCompleted {
		t.Errorf("step ended %+v", ev)
	}
	n.cancelJob(t, req.JobID)
	ctld.Ended(req.JobID)
}

// TestStubbornRunnerKilledAtJobEnd: a runner that ignores SIGTERM when
// its job ends is killed after the kill wait and a grace, and its step
// still ends (CANCELLED, saying it had no result) before the job.
func TestStubbornRunnerKilledAtJobEnd(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n, job := stepNode(t, ctld, "")
	n.launchStep(t, job.JobID, 0, "stubborn")
	waitRunner(t, n.d.StateDir(), job.JobID, 0)
	n.cancelJob(t, job.JobID)
	ctld.Ended(job.JobID)
	if ev := ctld.StepEnded(job.JobID, 0); ev.State != api.StateCancelled || !strings.Contains(ev.Message, "without a result") {
		t.Errorf("step of a killed runner ended %+v, want CANCELLED without a result", ev)
	}
	if kinds := ctld.Kinds(job.JobID); !reflect.DeepEqual(kinds, []api.JobEventKind{api.EventStarted, api.EventStepEnded, api.EventEnded}) {
		t.Errorf("events %v, want the step's end before the job's", kinds)
	}
	mustNoJobDirs(t, n)
}

// A signal or a suspend waiting for its job's container wakes when the
// shim says the container runs, before the shim has written its started
// file; a job that left ends the wait with false. (A step launch does
// not wait: its runner does, shim's stepwait.go.)
func TestWaitJobStartedWakesOnTheShimsWord(t *testing.T) {
	d := &Daemon{jobs: map[uint64]*job{}}
	j := &job{id: 7, dir: t.TempDir(), started: make(chan struct{})}
	d.jobs[j.id] = j
	woke := make(chan bool)
	go func() { woke <- d.waitJobStarted(j, time.Minute) }()
	close(j.started)
	if !<-woke {
		t.Fatal("the wait ended false after the shim said the job started")
	}
	gone := &job{id: 8, dir: t.TempDir(), started: make(chan struct{})}
	if d.waitJobStarted(gone, time.Minute) {
		t.Fatal("the wait for a job this node does not hold ended true")
	}
}
