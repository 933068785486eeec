package cli

import (
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

var inJob = map[string]string{"SLURM_JOB_ID": "5"}

// splitLinesPlayer is a runner whose tasks each print one line in two
// pieces, interleaved with the other task of the node, and exit with
// code(rank). The node with rank 0 first echoes its standard input.
func splitLinesPlayer(code func(int) int) func(*testing.T, *fakeStepNode, api.StepLaunch) {
	return func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if slices.Contains(n.ranks, 0) {
			n.readUntil(rc, func(f stepio.Frame) bool { return f.Kind == stepio.Stdin && len(f.Payload) == 0 })
			n.mu.Lock()
			rc.out(t, 0, "stdin was "+string(n.stdin)+"\n")
			n.mu.Unlock()
		}
		for _, r := range n.ranks {
			rc.out(t, r, rankLine(r, "sa"))
		}
		for _, r := range n.ranks {
			rc.out(t, r, "ys hi\n")
		}
		for _, r := range n.ranks {
			rc.exit(t, r, stepio.ExitStatus{Code: code(r)})
		}
		rc.finish(t)
	}
}

func twoNodes(play func(*testing.T, *fakeStepNode, api.StepLaunch)) (*fakeStepNode, *fakeStepNode) {
	return &fakeStepNode{name: "n1", ranks: []int{0, 1}, play: play},
		&fakeStepNode{name: "n2", ranks: []int{2, 3}, play: play}
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

func TestSrunLabelsOutputAndExitsWithHighestCode(t *testing.T) {
	n1, n2 := twoNodes(splitLinesPlayer(func(r int) int { return map[int]int{2: 3, 3: 1}[r] }))
	fc := newFakeStepCluster(t, n1, n2)
	code, stdout, stderr := fc.srun(t, "typed", inJob, "-l", "-N2", "-n", "4", "--ntasks-per-node=2", "hostname", "-s")
	if code != 3 {
		t.Errorf("exit status %d, want 3 (the highest task's); stderr:\n%s", code, stderr)
	}
	want := []string{"0: rank 0 says hi", "0: stdin was typed", "1: rank 1 says hi", "2: rank 2 says hi", "3: rank 3 says hi"}
	if got := sortedLines(stdout); !slices.Equal(got, want) {
		t.Errorf("stdout lines %q, want %q", got, want)
	}
	for _, line := range []string{"srun: error: n2: task 2: Exited with exit code 3", "srun: error: n2: task 3: Exited with exit code 1"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	if fc.request.Nodes != 2 || fc.request.Ntasks != 4 || fc.request.NtasksPerNode != 2 || fc.request.Name != "hostname" {
		t.Errorf("step request %+v", fc.request)
	}
	for _, n := range []*fakeStepNode{n1, n2} {
		if len(n.launches) != 1 {
			t.Fatalf("%s got %d launches", n.name, len(n.launches))
		}
		l := n.launches[0]
		if !slices.Equal(l.Argv, []string{"hostname", "-s"}) || l.Credential.Sig != "signed" || len(l.IOToken) != 64 ||
			l.MasterPort <= 0 || !slices.Equal(l.Env, []string{"FROM_SRUN=1"}) {
			t.Errorf("%s launch %+v", n.name, l)
		}
		if host, _, _ := net.SplitHostPort(l.IOAddr); host != "127.0.0.1" {
			t.Errorf("IOAddr %s: want the loopback address that reaches the loopback nodes", l.IOAddr)
		}
	}
	if n1.launches[0].IOToken != n2.launches[0].IOToken || n1.launches[0].MasterPort != n2.launches[0].MasterPort {
		t.Errorf("nodes got different tokens or master ports")
	}
}

func TestSrunWithoutLabelPassesOutputThrough(t *testing.T) {
	n1 := &fakeStepNode{name: "n1", ranks: []int{0, 1}, play: splitLinesPlayer(func(int) int { return 0 })}
	fc := newFakeStepCluster(t, n1)
	code, stdout, stderr := fc.srun(t, "", inJob, "--input=none", "true")
	if code != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	// Without -l pieces are relayed as they come, unlabelled: lines of
	// tasks on one node mix.
	if want := "stdin was \nrank 0 sarank 1 says hi\nys hi\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}

// TestSrunForwardsSignals: a SIGTERM reaching srun arrives at every node
// as a Signal frame; a task a signal ended counts as 128+signal.
func TestSrunForwardsSignals(t *testing.T) {
	// Keep the test process alive if srun's own handler is not installed.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)

	var connected sync.WaitGroup
	connected.Add(2)
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			connected.Done()
			return
		}
		rc.out(t, n.ranks[0], "up\n") // srun registered the node once this is relayed
		connected.Done()
		n.readUntil(rc, func(f stepio.Frame) bool { return f.Kind == stepio.Signal })
		for _, r := range n.ranks {
			rc.exit(t, r, stepio.ExitStatus{Code: 128 + 15, Signal: 15})
		}
		rc.finish(t)
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	go func() {
		connected.Wait()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	code, _, stderr := fc.srun(t, "", inJob, "-i", "none", "sleep", "100")
	if code != 143 {
		t.Errorf("exit status %d, want 143; stderr:\n%s", code, stderr)
	}
	for _, n := range []*fakeStepNode{n1, n2} {
		<-n.played
		if !slices.Equal(n.signals, []byte{15}) {
			t.Errorf("%s received signals %v, want [15]", n.name, n.signals)
		}
	}
	if !strings.Contains(stderr, "srun: error: n1: task 0: Terminated") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestSrunDropsImpostors: connections with a wrong token, a first frame
// that is no Hello, or a node outside the step are closed unheard; the
// real runner is served.
func TestSrunDropsImpostors(t *testing.T) {
	dropped := map[string]bool{}
	var mu sync.Mutex
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		impostors := map[string]func() *runnerConn{
			"wrong token": func() *runnerConn { return dial(t, l, strings.Repeat("0", 64), n.name) },
			"other node":  func() *runnerConn { return dial(t, l, l.IOToken, "n9") },
			"no hello": func() *runnerConn {
				c, err := net.Dial("tcp", l.IOAddr)
				if err != nil {
					t.Error(err)
					return nil
				}
				rc := &runnerConn{c: c, w: stepio.NewWriter(c)}
				rc.out(t, 0, "sneaky\n")
				return rc
			},
		}
		for what, open := range impostors {
			rc := open()
			if rc == nil {
				continue
			}
			rc.out(t, 0, "from "+what+"\n")
			if _, err := stepio.Read(rc.c); err == nil {
				t.Errorf("%s: srun sent a frame to an impostor", what)
			}
			mu.Lock()
			dropped[what] = true
			mu.Unlock()
			rc.c.Close()
		}
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		rc.out(t, 0, "genuine\n")
		rc.exit(t, 0, stepio.ExitStatus{})
		rc.finish(t)
	}
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}, play: play})
	code, stdout, stderr := fc.srun(t, "", inJob, "-v", "true")
	if code != 0 || stdout != "genuine\n" {
		t.Errorf("exit %d stdout %q, want 0 and only the genuine output; stderr:\n%s", code, stdout, stderr)
	}
	if len(dropped) != 3 {
		t.Errorf("impostors dropped: %v", dropped)
	}
	for _, why := range []string{"wrong token", `node "n9" is not in the step`, "not a hello"} {
		if !strings.Contains(stderr, why) {
			t.Errorf("-v stderr does not say %q:\n%s", why, stderr)
		}
	}
}

// TestSrunOutOfMemory: a node that reports OOM kills among its tasks
// (Done's payload) makes srun say "Out Of Memory" once, naming that
// node's tasks, and exit 1 whatever the tasks' statuses, as Slurm 22.05's
// srun does when slurmstepd reports SIG_OOM (launch_slurm.c, srun.c).
// Here n2's tasks exit 0 and 137, n1's 5: without the report srun would
// exit 137.
func TestSrunOutOfMemory(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n1" {
			rc.exit(t, 0, stepio.ExitStatus{Code: 5})
			rc.exit(t, 1, stepio.ExitStatus{Code: 0})
			rc.finish(t)
			return
		}
		rc.exit(t, 2, stepio.ExitStatus{Code: 0})
		rc.exit(t, 3, stepio.ExitStatus{Code: 137, Signal: 9})
		rc.send(t, stepio.DoneFrame(2))
		rc.finish(t)
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "-N2", "-n4", "-i", "none", "hog")
	if code != 1 {
		t.Errorf("exit status %d, want 1 (Out Of Memory); stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "Out Of Memory"); n != 1 || !strings.Contains(stderr, "srun: error: n2: tasks 2-3: Out Of Memory\n") {
		t.Errorf("stderr says Out Of Memory %d times, want once for n2's tasks 2-3:\n%s", n, stderr)
	}
}

// TestSrunKillOnBadExit: with -K a failing task makes srun kill the rest.
func TestSrunKillOnBadExit(t *testing.T) {
	play := func(t *testing.T, n *fakeStepNode, l api.StepLaunch) {
		rc := dial(t, l, l.IOToken, n.name)
		if rc == nil {
			return
		}
		if n.name == "n1" {
			rc.exit(t, 0, stepio.ExitStatus{Code: 0})
			rc.exit(t, 1, stepio.ExitStatus{Code: 2})
			rc.finish(t)
			return
		}
		n.readUntil(rc, func(f stepio.Frame) bool { return f.Kind == stepio.Signal && f.Payload[0] == 9 })
		for _, r := range n.ranks {
			rc.exit(t, r, stepio.ExitStatus{Code: 137, Signal: 9})
		}
		rc.finish(t)
	}
	n1, n2 := twoNodes(play)
	fc := newFakeStepCluster(t, n1, n2)
	code, _, stderr := fc.srun(t, "", inJob, "-K", "-i", "none", "work")
	if code != 137 {
		t.Errorf("exit status %d, want 137; stderr:\n%s", code, stderr)
	}
	<-n2.played
	if !slices.Contains(n2.signals, 9) {
		t.Errorf("n2 got signals %v, want SIGKILL", n2.signals)
	}
	if !strings.Contains(stderr, "srun: Terminating StepId=5.2") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestSrunRefusals(t *testing.T) {
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1", ranks: []int{0}})
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"SLURM_JOB_ID": "x"}, []string{"true"}, `srun: error: $SLURM_JOB_ID="x" is not a job ID`},
		{inJob, []string{"--foo", "true"}, "srun: unrecognized option '--foo'\nTry \"srun --help\" for more information\n"},
		{inJob, []string{"-n", "0", "true"}, `srun: error: invalid --ntasks "0"`},
		{inJob, []string{"--mpi=pmix", "true"}, "srun: error: --mpi=pmix is not supported: corral serves PMI-1 and PMI-2 (--mpi=pmi2, for MPICH programs); start Open MPI programs with mpirun inside the job\n"},
		{inJob, []string{"-l"}, "srun: error: no command given to execute\n"},
		{inJob, []string{"--jobid", "6", "true"}, "srun: error: Unable to create step for job 6: job 6 does not exist\n"},
	} {
		code, stdout, stderr := fc.srun(t, "", tc.env, tc.args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%q: exit %d stdout %q stderr %q, want 1 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	// ctld's refusal, in Slurm's words already, is not prefixed twice.
	fc.refuse = "Unable to create step for job 5: the step asks 8 CPUs on n1, the allocation has 4"
	code, _, stderr := fc.srun(t, "", inJob, "-c8", "true")
	if code != 1 || stderr != "srun: error: "+fc.refuse+"\n" {
		t.Errorf("refused step: exit %d stderr %q", code, stderr)
	}
}

func TestSrunVersionAndHelp(t *testing.T) {
	fc := newFakeStepCluster(t)
	if code, stdout, _ := fc.srun(t, "", nil, "--version"); code != 0 || !strings.HasPrefix(stdout, "slurm "+SlurmVersion+" (corral ") {
		t.Errorf("--version: %d %q", code, stdout)
	}
	if code, stdout, _ := fc.srun(t, "", nil, "-h"); code != 0 || !strings.HasPrefix(stdout, "Usage: srun") {
		t.Errorf("-h: %d %q", code, stdout)
	}
}
