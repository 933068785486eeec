package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sacct with the real binaries: a 2-node batch job that runs two srun
// steps is listed with its batch and extern parts and its steps, each
// with its own state, exit code and node count, as Slurm's sacct lists
// them; -X lists the job alone; -j JOB.STEP picks one step.
func TestSacctStepLines(t *testing.T) {
	c, dir, bin := twoNodesWithSlurmNames(t)
	id := c.Submit(dir, "-N2", "--ntasks-per-node=1", "-o", "out", "--wrap", "srun true\nsrun -n1 sh -c 'exit 3'\ntrue")
	if j := c.WaitEnded(id, 60*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job ended %s (%s)", j.State, j.Message)
	}
	job := fmt.Sprint(id)
	r := c.slurmCmd(bin, dir, "sacct", "-j", job, "-P", "-o", "JobID,JobName,State,ExitCode,NNodes,DerivedExitCode")
	want := "JobID|JobName|State|ExitCode|NNodes|DerivedExitCode\n" +
		job + "|wrap|COMPLETED|0:0|2|3:0\n" +
		job + ".batch|batch|COMPLETED|0:0|1|\n" +
		job + ".extern|extern|COMPLETED|0:0|2|\n" +
		job + ".0|true|COMPLETED|0:0|2|\n" +
		job + ".1|sh|FAILED|3:0|1|\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("sacct -j %s: exit %d\n%s\nwant\n%s\nstderr %q", job, r.Code, r.Stdout, want, r.Stderr)
	}
	r = c.slurmCmd(bin, dir, "sacct", "-j", job, "-X", "-n", "-P", "-o", "JobID,State")
	if want := job + "|COMPLETED\n"; r.Code != 0 || r.Stdout != want {
		t.Errorf("sacct -X: exit %d %q, want %q; stderr %q", r.Code, r.Stdout, want, r.Stderr)
	}
	r = c.slurmCmd(bin, dir, "sacct", "-j", job+".1", "-n", "-P", "-o", "JobID,ExitCode,NTasks")
	if want := job + ".1|3:0|1\n"; r.Code != 0 || r.Stdout != want {
		t.Errorf("sacct -j %s.1: exit %d %q, want %q; stderr %q", job, r.Code, r.Stdout, want, r.Stderr)
	}
}
