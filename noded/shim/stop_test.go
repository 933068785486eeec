package shim_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// buildInitAttack builds testdata/initattack (static) into dir, where the
// job can run it.
func buildInitAttack(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "initattack")
	if err := containertest.Build(out, "./testdata/initattack", false); err != nil {
		t.Fatalf("building the attack helper: %v", err)
	}
	return out
}

// holdLeakedFDs listens on a fresh abstract Unix socket and keeps every
// file descriptor sent to it open until the test ends: the accomplice
// outside the job that the leak attack needs.
func holdLeakedFDs(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("corral-shimtest-%d-%d", os.Getpid(), nextID.Add(1))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	var held []int
	t.Cleanup(func() {
		l.Close()
		for _, fd := range held {
			syscall.Close(fd)
		}
	})
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			oob := make([]byte, syscall.CmsgSpace(4))
			_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
			if err == nil {
				msgs, _ := syscall.ParseSocketControlMessage(oob[:oobn])
				for _, m := range msgs {
					fds, _ := syscall.ParseUnixRights(&m)
					held = append(held, fds...)
				}
			}
			c.Close()
		}
	}()
	return name
}

// TestStopWithoutInitsHelp: a job that attacks its own corral-init still
// ends at cancel and at its time limit, within the kill wait. Ptrace
// stops init, so it forwards and reaps nothing; the leak hands init's
// report pipe to a process outside the job, so the pipe never reaches
// end-of-file. The shim ends the job from outside (SIGKILL to init from
// the host, which takes the PID namespace with it) and stops reading the
// report once init is gone.
func TestStopWithoutInitsHelp(t *testing.T) {
	containertest.MustRoot(t)
	for _, tc := range []struct {
		name, attack string
		uid          uint32
		timeLimit    int64
		want         api.JobState
	}{
		{"ptrace, root, cancel", "ptrace", 0, 0, api.StateCancelled},
		{"ptrace, root, time limit", "ptrace", 0, 1, api.StateTimeout},
		{"ptrace, user, cancel", "ptrace", containertest.Nobody, 0, api.StateCancelled},
		{"leaked report pipe, user, cancel", "leak", containertest.Nobody, 0, api.StateCancelled},
		{"leaked report pipe, root, time limit", "leak", 0, 1, api.StateTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work := containertest.MustUserDir(t, int(tc.uid), int(tc.uid))
			cmd := buildInitAttack(t, work) + " " + tc.attack
			if tc.attack == "leak" {
				cmd += " " + holdLeakedFDs(t)
			}
			tj := mustJob(t, cmd+" &\nwait\n", func(j *shim.Job) {
				j.Launch.UID, j.Launch.GID, j.Launch.Groups = tc.uid, tc.uid, nil
				j.Launch.TimeLimit = tc.timeLimit
				j.Launch.WorkDir, j.Launch.Home = work, work
			})
			tj.work = work
			cancel := make(chan struct{})
			done := make(chan *shim.Result, 1)
			go func() { done <- shim.Run(tj.dir, shim.Controls{Cancel: cancel}) }()
			if !containertest.Eventually(20*time.Second, func() bool {
				return strings.Contains(tj.outputSoFar(), "attached")
			}) {
				t.Fatalf("the attack did not succeed; job output %q", tj.outputSoFar())
			}
			if tc.timeLimit == 0 {
				close(cancel)
			}
			select {
			case r := <-done:
				if r.State != tc.want {
					t.Errorf("result %+v, want %s", r, tc.want)
				}
			case <-time.After(30 * time.Second): // kill wait 300 ms: far more than enough
				t.Fatalf("the job did not end after its %s", map[bool]string{true: "time limit", false: "cancel"}[tc.timeLimit > 0])
			}
			tj.mustBeClean(t)
		})
	}
}

// outputSoFar is the job's output file as it is now, "" if not there yet.
func (tj *testJob) outputSoFar() string {
	b, _ := os.ReadFile(filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID)))
	return string(b)
}
