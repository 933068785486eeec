package noded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
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

// childNodedArg makes the test binary a corral-noded of the Config in
// $childConfigEnv, printing "addr <host:port>" once it listens: a daemon
// a test can kill -9, which one in the test's own process cannot be.
const (
	childNodedArg  = "child-noded"
	childConfigEnv = "CORRAL_TEST_NODED_CONFIG"
)

func childNoded() int {
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(childConfigEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child noded:", err)
		return 2
	}
	d, err := New(cfg, log.New(os.Stderr, "child noded: ", log.Lmicroseconds))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child noded:", err)
		return 1
	}
	fmt.Printf("addr %s\n", d.Addr())
	if err := d.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "child noded:", err)
		return 1
	}
	return 0
}

// startChildNoded runs a noded in a process of its own on state.
func startChildNoded(t *testing.T, ctld *nodedtest.FakeCtld, state string) (*exec.Cmd, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "tn" + strconv.Itoa(os.Getpid()), CtldURL: ctld.URL(), Listen: "127.0.0.1:0", Key: testKey,
		StateDir: state, CPUs: 2, MemBytes: 1 << 30, KillWait: 300 * time.Millisecond, InitPath: initPath,
		ShimCommand: []string{exe, fakeShimArg}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, childNodedArg)
	cmd.Env = append(os.Environ(), childConfigEnv+"="+string(b))
	var logs bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &logs}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("child noded's log:\n%s", logs.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		t.Fatalf("child noded did not start (%q, %v)", line, err)
	}
	return cmd, addr
}

// TestStepSurvivesNodedKill is the acceptance of issue 13 for noded: kill
// -9 of noded while steps run leaves their runners running; after the
// restart the step that ended meanwhile is reported, the one still
// running is supervised again (same runner, its end reported with its
// exit code) and the job takes new steps.
func TestStepSurvivesNodedKill(t *testing.T) {
	containertest.MustRoot(t)
	ctld := nodedtest.NewFakeCtld(t, testKey)
	state := containertest.MustStateDir(t)
	child, addr := startChildNoded(t, ctld, state)
	name := "tn" + strconv.Itoa(os.Getpid())
	job := api.LaunchRequest{JobID: jobIDs.Add(1), Name: "j", Partition: "p", User: "nobody",
		UID: containertest.Nobody, GID: containertest.Nobody, Home: "/", Script: "true\n", WorkDir: "/",
		CPUs: 1, MemBytes: 128 << 20, NodeList: []string{name}}
	if err := api.NewNodeClient("http://"+addr, testKey, 10*time.Second).Do(context.Background(), http.MethodPost, "/v1/launch", job, nil); err != nil {
		t.Fatal(err)
	}
	ctld.Started(job.JobID)
	t.Cleanup(func() { stopOrphans(filepath.Join(state, "jobs", formatUint(job.JobID))) })
	launchStepAt(t, addr, name, job.JobID, 0, "wait", "5")
	launchStepAt(t, addr, name, job.JobID, 1, "wait", "0")
	waitRunner(t, state, job.JobID, 0)
	waitRunner(t, state, job.JobID, 1)
	runner0, err := os.ReadFile(filepath.Join(stepDir(state, job.JobID, 0), shim.RunnerPidFile))
	if err != nil {
		t.Fatal(err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	release(t, state, job.JobID, 1) // ends while no noded runs
	if !containertest.Eventually(10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(stepDir(state, job.JobID, 1), shim.StepResultFile))
		return err == nil
	}) {
		t.Fatal("the runner of step 1 did not finish without noded")
	}

	n := mustNode(t, ctld, state, fakeShimConfig(t))
	if ev := ctld.StepEnded(job.JobID, 1); ev.State != api.StateCompleted || ev.ExitCode != 0 {
		t.Errorf("step that ended while noded was down: %+v, want COMPLETED", ev)
	}
	if got := n.steps(t); len(got) == 0 || got[0] != (api.NodeStep{JobID: job.JobID, StepID: 0}) {
		t.Errorf("steps after the restart: %+v, want step 0 running", got)
	}
	release(t, state, job.JobID, 0)
	if ev := ctld.StepEnded(job.JobID, 0); ev.ExitCode != 5 || ev.State != api.StateFailed {
		t.Errorf("reattached step ended %+v, want exit code 5", ev)
	}
	if got := runnerStarts(state, job.JobID, 0); got != 1 {
		t.Errorf("step 0's runner started %d times, want once", got)
	}
	if b, _ := os.ReadFile(filepath.Join(stepDir(state, job.JobID, 0), shim.RunnerPidFile)); string(b) != string(runner0) {
		t.Errorf("step 0's runner is %s after the restart, was %s", b, runner0)
	}
	n.launchStep(t, job.JobID, 2, "exit", "0") // the recovered job takes new steps
	ctld.StepEnded(job.JobID, 2)
	n.cancelJob(t, job.JobID)
	ctld.Ended(job.JobID)
	ctld.Lock()
	ends := 0
	for _, ev := range ctld.Events {
		if ev.Kind == api.EventStepEnded {
			ends++
		}
	}
	ctld.Unlock()
	if ends != 3 {
		t.Errorf("%d step ends reported, want 3 (one per step)", ends)
	}
	mustNoJobDirs(t, n)
}

// stopOrphans ends the fake shim and runners of a job whose noded a
// failed test never restarted.
func stopOrphans(jobDir string) {
	if pid := shimPid(jobDir); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	ents, _ := os.ReadDir(filepath.Join(jobDir, shim.StepsDir))
	for _, e := range ents {
		id, _ := strconv.Atoi(e.Name())
		if pid := runnerPid(&step{id: id, jobDir: jobDir, dir: filepath.Join(jobDir, shim.StepsDir, e.Name())}); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}
