package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// endAll ends every task of n with st, then the node.
func (rc *runnerConn) endAll(t *testing.T, n *fakeStepNode, st stepio.ExitStatus) {
	for _, r := range n.ranks {
		rc.exit(t, r, st)
	}
	rc.finish(t)
}

// readFence reads srun's frames until a whole FenceDone has arrived and
// returns its sequence and puts.
func readFence(t *testing.T, rc *runnerConn) (int, map[string]string) {
	kvs := map[string]string{}
	for {
		f, err := stepio.Read(rc.c)
		if err != nil {
			t.Errorf("waiting for a fence answer: %v", err)
			return -1, nil
		}
		if f.Kind != stepio.FenceDone {
			continue
		}
		seq, last, err := stepio.DecodeFence(f.Payload, kvs)
		if err != nil {
			t.Errorf("fence answer: %v", err)
			return -1, nil
		}
		if last {
			return seq, kvs
		}
	}
}

// TestSrunPMIFences: srun launches a --mpi=pmi2 step with PMI, merges
// the nodes' fences in turn (one of them larger than a frame) and
// answers every node with all the puts.
func TestSrunPMIFences(t *testing.T) {
	got := map[string][]map[string]string{}
	var gotMu sync.Mutex // both nodes' players write got
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		for seq := range 2 {
			puts := map[string]string{"from-" + n.name: fmt.Sprint(seq)}
			if seq == 1 {
				for i := range 100 {
					puts[fmt.Sprintf("%s-%d", n.name, i)] = strings.Repeat("v", 1000)
				}
			}
			frames, err := stepio.FenceFrames(stepio.Fence, seq, puts)
			if err != nil {
				t.Error(err)
				return
			}
			for _, f := range frames {
				rc.send(t, f)
			}
			s, kvs := readFence(t, rc)
			if s != seq {
				t.Errorf("%s: answer for fence %d, want %d", n.name, s, seq)
			}
			gotMu.Lock()
			got[n.name] = append(got[n.name], kvs)
			gotMu.Unlock()
		}
		rc.endAll(t, n, stepio.ExitStatus{})
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "--mpi=pmi2", "-i", "none", "./app")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if l := n1.launches[0]; l.MPI != api.MPIPMI2 {
		t.Errorf("launch MPI %q, want pmi2", l.MPI)
	}
	for _, n := range []string{"n1", "n2"} {
		if len(got[n]) != 2 {
			t.Fatalf("%s got %d fence answers, want 2", n, len(got[n]))
		}
		if want := map[string]string{"from-n1": "0", "from-n2": "0"}; !maps.Equal(got[n][0], want) {
			t.Errorf("%s: fence 0 gave %v, want %v", n, got[n][0], want)
		}
		if len(got[n][1]) != 202 || got[n][1]["n2-99"] != strings.Repeat("v", 1000) {
			t.Errorf("%s: fence 1 gave %d puts, want 202", n, len(got[n][1]))
		}
	}
}

// TestSrunPMINodeEndsInAFence: a node whose tasks end while the other
// waits in a fence would leave it waiting forever: srun ends the step.
func TestSrunPMINodeEndsInAFence(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n2" {
			rc.endAll(t, n, stepio.ExitStatus{Code: 1})
			return
		}
		frames, _ := stepio.FenceFrames(stepio.Fence, 0, map[string]string{"k": "v"})
		rc.send(t, frames[0])
		killedOnSIGKILL(t, n, rc)
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "--mpi=pmi2", "-i", "none", "./app")
	if code != 137 || !strings.Contains(stderr, "srun: error: StepId=5.2: PMI: fence 0 cannot complete: the tasks of node n2 have ended\nsrun: Terminating StepId=5.2\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSrunPMIAbort: a task's abort reaches the other node, which kills
// its tasks, and srun exits with the abort's code.
func TestSrunPMIAbort(t *testing.T) {
	var abortSeen stepio.AbortStatus
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n1" {
			rc.send(t, stepio.AbortFrame(stepio.AbortStatus{Rank: 1, Code: 7, Message: "task 1 called MPI_Abort with exit code 7"}))
			rc.exit(t, 0, stepio.ExitStatus{Code: 137, Signal: 9})
			rc.exit(t, 1, stepio.ExitStatus{Code: 7})
			rc.finish(t)
			return
		}
		n.readUntil(rc, func(f stepio.Frame) bool {
			if f.Kind == stepio.Abort {
				abortSeen, _ = stepio.DecodeAbort(f.Payload)
			}
			return f.Kind == stepio.Abort
		})
		rc.endAll(t, n, stepio.ExitStatus{Code: 137, Signal: 9})
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "--mpi=pmi2", "-i", "none", "./app")
	if code != 7 || !strings.Contains(stderr, "srun: error: n1: task 1: task 1 called MPI_Abort with exit code 7\nsrun: Job step aborted: StepId=5.2\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	<-n2.played
	if abortSeen.Code != 7 || abortSeen.Rank != 1 {
		t.Errorf("n2 got abort %+v", abortSeen)
	}
}

// TestSrunMPIDefault: a step without --mpi gets the cluster's
// MpiDefault from its grant; --mpi=none overrides it.
func TestSrunMPIDefault(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		if rc := dial(t, l, l.IOToken, n.name); rc != nil {
			rc.endAll(t, n, stepio.ExitStatus{})
		}
	}
	for _, tc := range []struct {
		def  string
		args []string
		want string
	}{
		{"pmi2", nil, "pmi2"},
		{"pmi2", []string{"--mpi=none"}, ""},
		{"", nil, ""},
		{"", []string{"--mpi=pmi2"}, "pmi2"},
	} {
		n := &fakeStepNode{name: "n1", ranks: []int{0}, play: play}
		fc := newFakeStepCluster(t, n)
		fc.grant.MPIDefault = tc.def
		code, _, stderr := fc.srun(t, "", inJob, append(slices.Clone(tc.args), "-i", "none", "true")...)
		if code != 0 || n.launches[0].MPI != tc.want {
			t.Errorf("MpiDefault %q, %q: exit %d, launch MPI %q, want %q; stderr:\n%s", tc.def, tc.args, code, n.launches[0].MPI, tc.want, stderr)
		}
	}
}

func TestSrunMPIList(t *testing.T) {
	fc := newFakeStepCluster(t)
	code, stdout, _ := fc.srun(t, "", nil, "--mpi=list")
	if code != 0 || stdout != "MPI plugin types are...\n\tnone\n\tpmi2\n" {
		t.Errorf("--mpi=list: %d %q", code, stdout)
	}
}
