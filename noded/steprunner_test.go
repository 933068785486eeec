package noded

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/stepio"
)

// srunOutput listens as srun does for one runner and returns what it
// said on standard output, once it said Done or went away; first is
// closed at its first output.
func srunOutput(t *testing.T, token string) (addr string, first <-chan struct{}, out <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c, started := make(chan string, 1), make(chan struct{})
	go func() {
		var b strings.Builder
		defer func() { c <- b.String() }()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		hello, err := stepio.Read(conn)
		if tok, _, perr := stepio.ParseHello(hello.Payload); err != nil || perr != nil || tok != token {
			t.Errorf("the runner's first frame: %+v (%v)", hello, err)
			return
		}
		for {
			f, err := stepio.Read(conn)
			if err != nil || f.Kind == stepio.Done {
				return
			}
			if f.Kind == stepio.Stdout {
				if b.Len() == 0 {
					close(started)
				}
				b.Write(f.Payload)
			}
		}
	}()
	return ln.Addr().String(), started, c
}

// TestStepsWithTheRealRunner: noded with corral-shim's own runner: a
// step's task runs in the job's container as the job's user, its output
// reaches srun and its exit code ctld; ctld's cancel ends a step
// CANCELLED, and so does a signal from elsewhere; the end of the job
// ends a step still running, and nothing is left behind.
func TestStepsWithTheRealRunner(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("sleep 100\n")
	n.launch(t, req)
	t.Cleanup(func() { n.d.cancel(req.JobID, "the test is over") })
	ctld.Started(req.JobID)
	launch := func(step int, argv ...string) (<-chan struct{}, <-chan string) {
		addr, first, out := srunOutput(t, "tok")
		l := nodedtest.StepLaunch(testKey, n.d.Name(), req.JobID, step, containertest.Nobody, time.Minute, argv...)
		l.IOAddr, l.IOToken, l.Cwd = addr, "tok", n.work
		if code, msg := postStep(t, n.d.Addr(), l); code != http.StatusOK {
			t.Fatalf("launch of step %d: %d %s", step, code, msg)
		}
		return first, out
	}
	// waitRunning waits for a step's first output, so it runs.
	waitRunning := func(first <-chan struct{}) {
		select {
		case <-first:
		case <-time.After(30 * time.Second):
			t.Fatal("the step's task never said it runs")
		}
	}

	_, out := launch(0, "/bin/sh", "-c", `echo "rank $SLURM_PROCID uid $(id -u)"; exit 3`)
	ev := ctld.StepEnded(req.JobID, 0)
	if ev.ExitCode != 3 || ev.State != api.StateFailed || ev.Message != "" {
		t.Errorf("step 0 ended %+v, want exit code 3", ev)
	}
	if got := <-out; got != "rank 0 uid 65534\n" {
		t.Errorf("srun heard %q", got)
	}

	// Slurm's scancel JOB.STEP SIGKILLs the tasks: one that traps SIGTERM
	// is killed all the same.
	ready, _ := launch(1, "/bin/sh", "-c", `trap "exit 0" TERM; echo ready; sleep 100 & wait`)
	waitRunning(ready)
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/steps/cancel", api.StepCancelRequest{JobID: req.JobID, StepID: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if ev := ctld.StepEnded(req.JobID, 1); ev.State != api.StateCancelled || ev.Signal != int(syscall.SIGKILL) {
		t.Errorf("cancelled step ended %+v, want CANCELLED by SIGKILL", ev)
	}

	// A task killed by a signal someone else sent, its job running on:
	// CANCELLED, as Slurm's accounting has any signalled step, reported
	// without waiting for a container end that will not come.
	launch(2, "/bin/sh", "-c", "kill -TERM $$")
	if ev := ctld.StepEnded(req.JobID, 2); ev.State != api.StateCancelled || ev.Signal != int(syscall.SIGTERM) {
		t.Errorf("step whose task got SIGTERM from elsewhere ended %+v, want CANCELLED by SIGTERM", ev)
	}

	ready, _ = launch(3, "/bin/sh", "-c", "echo ready; exec sleep 100")
	waitRunning(ready)
	n.cancelJob(t, req.JobID)
	if ev := ctld.StepEnded(req.JobID, 3); ev.State != api.StateCancelled {
		t.Errorf("step of a cancelled job ended %+v, want CANCELLED", ev)
	}
	ctld.Ended(req.JobID)
	mustNoJobDirs(t, n)
}

// TestStepEndsWithItsJob: a step still running when its job's script
// ends dies with the job's container and ends CANCELLED, before the job.
func TestStepEndsWithItsJob(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq("while [ ! -e end ]; do sleep 0.05; done\n")
	n.launch(t, req)
	t.Cleanup(func() { n.d.cancel(req.JobID, "the test is over") })
	ctld.Started(req.JobID)
	addr, ready, _ := srunOutput(t, "tok")
	l := nodedtest.StepLaunch(testKey, n.d.Name(), req.JobID, 0, containertest.Nobody, time.Minute, "/bin/sh", "-c", "echo ready; exec sleep 100")
	l.IOAddr, l.IOToken = addr, "tok"
	if code, msg := postStep(t, n.d.Addr(), l); code != http.StatusOK {
		t.Fatalf("step launch: %d %s", code, msg)
	}
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the step's task never said it runs")
	}
	if err := os.WriteFile(filepath.Join(n.work, "end"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ev := ctld.Ended(req.JobID); ev.State != api.StateCompleted {
		t.Errorf("job ended %+v, want COMPLETED", ev)
	}
	if ev := ctld.StepEnded(req.JobID, 0); ev.State != api.StateCancelled || ev.Signal == 0 {
		t.Errorf("step of an ended job ended %+v, want CANCELLED by a signal", ev)
	}
	if kinds := ctld.Kinds(req.JobID); !reflect.DeepEqual(kinds, []api.JobEventKind{api.EventStarted, api.EventStepEnded, api.EventEnded}) {
		t.Errorf("events %v, want the step's end before the job's", kinds)
	}
	mustNoJobDirs(t, n)
}
