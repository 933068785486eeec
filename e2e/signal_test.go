package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// signalScript traps USR1, USR2 and HUP in the batch shell, and HUP in a
// child it starts, and runs until the file stop appears. Waiting on a
// background sleep lets the shell run a trap at once (a shell runs traps
// only between commands).
const signalScript = `#!/bin/bash
trap 'echo script got USR1' USR1
trap 'echo script got USR2' USR2
trap 'echo script got HUP' HUP
bash -c 'trap "echo child got HUP" HUP; echo child ready; while [ ! -e stop ]; do sleep 0.1 & wait $!; done' &
while [ ! -e stop ]; do sleep 0.2 & wait $!; done
wait
echo done
`

// The acceptance, with the real daemons: scancel -s reaches what
// Slurm 22.05 signals and the job keeps running. Plain -s goes to the
// steps, so the batch shell (this job has no steps) does not see it; -b
// reaches the shell's trap; -f the shell and its child. Then the job
// finishes normally.
func TestScancelSignalReachesTheTrap(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	script := filepath.Join(dir, "trap.sh")
	if err := os.WriteFile(script, []byte(signalScript), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.slurmCmd(bin, dir, "sbatch", "--parsable", script)
	if r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("sbatch printed %q", r.Stdout)
	}
	ref := strconv.FormatUint(id, 10)
	out := filepath.Join(dir, "slurm-"+ref+".out")
	c.WaitState(id, api.StateRunning, 30*time.Second)
	waitFile(t, out, "child ready", 30*time.Second)

	scancel := func(args ...string) {
		t.Helper()
		if r := c.slurmCmd(bin, dir, "scancel", append(args, ref)...); r.Code != 0 || r.Stderr != "" {
			t.Fatalf("scancel %q: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
	scancel("-s", "USR1")
	scancel("-b", "-s", "SIGUSR2")
	waitFile(t, out, "script got USR2", 30*time.Second)
	scancel("--full", "--signal=1")
	waitFile(t, out, "child got HUP", 30*time.Second)
	waitFile(t, out, "script got HUP", 30*time.Second)
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "USR1") {
		// USR1 was sent before USR2: had the shell got it, its trap would have run first.
		t.Errorf("plain scancel -s USR1 reached the batch shell (Slurm signals only the steps):\n%s", b)
	}
	if j := c.Job(id); j.State != api.StateRunning {
		t.Fatalf("after the signals the job is %s (%s), want RUNNING", j.State, j.Message)
	}

	if err := os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCompleted || j.ExitCode == nil || *j.ExitCode != 0 {
		t.Errorf("job ended %s exit %v (%s), want COMPLETED 0", j.State, j.ExitCode, j.Message)
	}
	if b, _ := os.ReadFile(out); !strings.HasSuffix(string(b), "done\n") {
		t.Errorf("output:\n%s", b)
	}
	// A job that ended takes no signal, in Slurm's words.
	r = c.slurmCmd(bin, dir, "scancel", "-s", "USR1", ref)
	if want := "scancel: error: Kill job error on job id " + ref + ": Job/step already completing or completed\n"; r.Code != 1 || r.Stderr != want {
		t.Errorf("scancel -s USR1 after the end: exit %d %q, want 1 %q", r.Code, r.Stderr, want)
	}
}
