package shim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
	"github.com/corral-hpc/corral/stepio"
)

// withPMI makes step stepID of tj's job an --mpi=pmi2 step.
func withPMI(t *testing.T, tj *testJob, stepID int) {
	t.Helper()
	dir := shim.StepDir(tj.dir, stepID)
	s, err := shim.ReadStepJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Launch.MPI = api.MPIPMI2
	if err := shim.WriteStepJob(dir, s); err != nil {
		t.Fatal(err)
	}
}

// pmiTalk is a shell function for the tasks: say a PMI-1 line on PMI_FD
// and print the answer.
const pmiTalk = `pmi() { printf '%s\n' "$1" >&$PMI_FD; read -r ans <&$PMI_FD; echo "$ans"; }
`

// TestStepRunnerServesPMI: the tasks of an --mpi=pmi2 step find their PMI
// socket and variables, the runner answers them, sends srun the node's
// puts when both entered the barrier and lets them out with srun's
// answer, after which each sees the other's put.
func TestStepRunnerServesPMI(t *testing.T) {
	tj, end := startJob(t, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()
	srun := newFakeSrun(t, "tok", node)
	script := pmiTalk + `echo "env $PMI_FD $PMI_RANK $PMI_SIZE $PMI_JOBID $PMI_SPAWNED"
pmi 'cmd=init pmi_version=1 pmi_subversion=1'
pmi 'cmd=get kvsname=x key=PMI_process_mapping'
pmi "cmd=put kvsname=x key=k$PMI_RANK value=v$PMI_RANK"
pmi 'cmd=barrier_in'
pmi "cmd=get kvsname=x key=k$((1 - PMI_RANK))"
pmi 'cmd=finalize'`
	mustStep(t, tj, 0, []int{0, 1}, []string{"/bin/sh", "-c", script}, srun.ln.Addr().String())
	withPMI(t, tj, 0)
	cmd, _ := startRunner(t, tj.dir, 0)
	w := srun.writer(t)
	fence := map[string]string{}
	got := srun.collect(t, func(f stepio.Frame) {
		if f.Kind != stepio.Fence {
			return
		}
		seq, last, err := stepio.DecodeFence(f.Payload, fence)
		if err != nil || !last {
			t.Errorf("fence %d: last %v, %v", seq, last, err)
			return
		}
		frames, _ := stepio.FenceFrames(stepio.FenceDone, seq, fence)
		for _, fr := range frames {
			if err := w.Write(fr); err != nil {
				t.Error(err)
			}
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Errorf("runner: %v", err)
	}
	if fence["k0"] != "v0" || fence["k1"] != "v1" || len(fence) != 2 {
		t.Errorf("srun got the fence %v, want k0=v0 k1=v1", fence)
	}
	for rank := range uint32(2) {
		want := strings.Join([]string{
			fmt.Sprintf("env 3 %d 2 %d.0 0", rank, tj.job.Launch.JobID),
			"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
			"cmd=get_result rc=0 value=(vector,(0,1,2))",
			"cmd=put_result rc=0",
			"cmd=barrier_out",
			fmt.Sprintf("cmd=get_result rc=0 value=v%d", 1-rank),
			"cmd=finalize_ack",
		}, "\n") + "\n"
		if g := got[rank]; g == nil || g.out != want || g.exit == nil || *g.exit != (stepio.ExitStatus{}) {
			t.Errorf("task %d: srun heard %+v (exit %v), want output:\n%s", rank, g, exitOf(g), want)
		}
	}
}

// TestStepRunnerPMIAbort: a task's abort is told to srun with its code,
// the node's other task is killed, and result.json says the abort's exit
// code and message.
func TestStepRunnerPMIAbort(t *testing.T) {
	tj, end := startJob(t, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`)
	defer end()
	srun := newFakeSrun(t, "tok", node)
	script := pmiTalk + `pmi 'cmd=init pmi_version=1 pmi_subversion=1'
if [ "$PMI_RANK" = 1 ]; then printf 'cmd=abort exitcode=5\n' >&$PMI_FD; fi
exec sleep 1000`
	mustStep(t, tj, 0, []int{0, 1}, []string{"/bin/sh", "-c", script}, srun.ln.Addr().String())
	withPMI(t, tj, 0)
	cmd, _ := startRunner(t, tj.dir, 0)
	srun.writer(t)
	var aborts []stepio.AbortStatus
	srun.collect(t, func(f stepio.Frame) {
		if f.Kind == stepio.Abort {
			a, err := stepio.DecodeAbort(f.Payload)
			if err != nil {
				t.Error(err)
			}
			aborts = append(aborts, a)
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Errorf("runner: %v", err)
	}
	if len(aborts) != 1 || aborts[0].Rank != 1 || aborts[0].Code != 5 {
		t.Errorf("srun heard aborts %+v, want one from task 1 with code 5", aborts)
	}
	res, err := shim.ReadStepResult(shim.StepDir(tj.dir, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 5 || !strings.Contains(res.Message, "task 1 called MPI_Abort with exit code 5") {
		t.Errorf("result.json %+v, want exit code 5 and the abort's message", res)
	}
}
