package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cli"
	"github.com/corral-hpc/corral/jobspec"
)

// slurmBin makes dir/slurm, the Slurm names linked to bin/corral-slurm,
// as `make` makes bin/slurm.
func slurmBin(t *testing.T, dir string) string {
	bin := filepath.Join(dir, "slurm")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range cli.SlurmNames() {
		if err := os.Symlink(filepath.Join(binDir, "corral-slurm"), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// slurmCmd runs a Slurm command of bin against c in dir.
func (c *Cluster) slurmCmd(bin, dir, name string, args ...string) Result {
	c.t.Helper()
	return runBinary(c.t, filepath.Join(bin, name), c.Socket, dir, args...)
}

// TestSlurmNames drives a job through the commands a pipeline engine
// uses, called by their Slurm names: sbatch, squeue, scancel, and the
// lookups scripts make with scontrol.
func TestSlurmNames(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	must := func(r Result, what string) string {
		t.Helper()
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, r.Code, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}

	out := must(c.slurmCmd(bin, dir, "sbatch", "--parsable", "--wrap", "sleep 30"), "sbatch --parsable")
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("sbatch --parsable printed %q, not a job ID", out)
	}
	line := must(c.slurmCmd(bin, dir, "squeue", "-h", "-o", "%i %t"), "squeue -h -o '%i %t'")
	if line != strconv.FormatUint(id, 10)+" PD\n" && line != strconv.FormatUint(id, 10)+" R\n" {
		t.Errorf("squeue -h -o '%%i %%t' printed %q, want job %d PD or R", line, id)
	}
	job := c.WaitState(id, api.StateRunning, 30*time.Second)
	if got, want := jobspec.JobOutputPath(job, job.Spec.Output), filepath.Join(dir, "slurm-"+strconv.FormatUint(id, 10)+".out"); got != want {
		t.Errorf("sbatch's default output is %s, want %s", got, want)
	}
	show := must(c.slurmCmd(bin, dir, "scontrol", "show", "job", strconv.FormatUint(id, 10)), "scontrol show job")
	if !strings.HasPrefix(show, "JobId="+strconv.FormatUint(id, 10)+" JobName=wrap\n") || !strings.Contains(show, " JobState=RUNNING ") {
		t.Errorf("scontrol show job:\n%s", show)
	}
	must(c.slurmCmd(bin, dir, "scancel", strconv.FormatUint(id, 10)), "scancel")
	if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateCancelled {
		t.Errorf("job %d ended %s after scancel, want CANCELLED", id, j.State)
	}
	if out := must(c.slurmCmd(bin, dir, "squeue", "-h", "-o", "%i"), "squeue after the cancel"); out != "" {
		t.Errorf("squeue still lists %q after the cancel", out)
	}
	// Named, the finished job is listed only when -t asks for its state
	// (a script's `while [ -n "$(squeue -h -j $id)" ]` ends with it).
	if out := must(c.slurmCmd(bin, dir, "squeue", "-h", "-j", strconv.FormatUint(id, 10)), "squeue -j after the cancel"); out != "" {
		t.Errorf("squeue -h -j %d lists %q after the cancel", id, out)
	}
	if out := must(c.slurmCmd(bin, dir, "squeue", "-h", "-t", "all", "-j", strconv.FormatUint(id, 10), "-o", "%T"), "squeue -t all -j"); out != "CANCELLED\n" {
		t.Errorf("squeue -h -t all -j %d -o %%T printed %q, want CANCELLED", id, out)
	}

	acct := must(c.slurmCmd(bin, dir, "sacct", "-P", "-n", "-X", "-o", "JobIDRaw,State"), "sacct -P -n -X -o JobIDRaw,State")
	// As Slurm's sacct says who cancelled it: root here, as scancel ran.
	if want := fmt.Sprintf("%d|CANCELLED by %d\n", id, os.Getuid()); acct != want {
		t.Errorf("sacct -P -n -X -o JobIDRaw,State printed %q, want %q", acct, want)
	}
	parts, err := c.Client.Partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, p := range parts {
		want += p.Name + map[bool]string{true: "*"}[p.Default] + "\n"
	}
	if got := must(c.slurmCmd(bin, dir, "sinfo", "-h", "-o", "%P"), "sinfo -h -o %P"); got != want {
		t.Errorf("sinfo -h -o %%P printed %q, want %q", got, want)
	}

	names := must(c.slurmCmd(bin, dir, "scontrol", "show", "hostnames", "dev[1-3]"), "scontrol show hostnames")
	if names != "dev1\ndev2\ndev3\n" {
		t.Errorf("scontrol show hostnames 'dev[1-3]' printed %q", names)
	}
	r := c.slurmCmd(bin, dir, "squeue", "--bogus")
	if r.Code != 1 || r.Stderr != "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n" {
		t.Errorf("squeue --bogus: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestSlurmNamesInsideAJob: a batch script finds the Slurm names on the
// PATH it was submitted with and expands its node list with scontrol, as
// MPI and pipeline scripts do.
func TestSlurmNamesInsideAJob(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	dir := jobDir(t)
	bin := slurmBin(t, dir) // in the submit directory: the job sees it (its /tmp is private)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	r := c.slurmCmd(bin, dir, "sbatch", "--parsable", "--wrap", `scontrol show hostnames "$SLURM_JOB_NODELIST"; scontrol show hostnames 'a[1-2]'`)
	if r.Code != 0 {
		t.Fatalf("sbatch: exit %d %s", r.Code, r.Stderr)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("sbatch --parsable printed %q", r.Stdout)
	}
	if j := c.WaitEnded(id, 60*time.Second); j.State != api.StateCompleted {
		t.Fatalf("job %d ended %s (%s)", id, j.State, j.Message)
	}
	got := readLines(t, filepath.Join(dir, "slurm-"+strconv.FormatUint(id, 10)+".out"))
	if strings.Join(got, " ") != "n1 a1 a2" {
		t.Errorf("the job printed %q, want n1 a1 a2", got)
	}
}

// TestSlurmJobName: a name with the characters scripts put in them
// (spaces, '=', ':') is taken whole and comes back unchanged from squeue
// and sacct.
func TestSlurmJobName(t *testing.T) {
	c := StartCluster(t, ClusterOpts{})
	bin, dir := slurmBin(t, t.TempDir()), jobDir(t)
	const name = "lr=0.1 run:v2"
	r := c.slurmCmd(bin, dir, "sbatch", "--parsable", "-J", name, "--wrap", "sleep 30")
	if r.Code != 0 {
		t.Fatalf("sbatch -J %q: exit %d %s", name, r.Code, r.Stderr)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("sbatch --parsable printed %q", r.Stdout)
	}
	if q := c.slurmCmd(bin, dir, "squeue", "-h", "-o", "%j"); q.Code != 0 || q.Stdout != name+"\n" {
		t.Errorf("squeue -h -o %%j: exit %d, printed %q, want %q", q.Code, q.Stdout, name+"\n")
	}
	if q := c.slurmCmd(bin, dir, "scancel", strconv.FormatUint(id, 10)); q.Code != 0 {
		t.Fatalf("scancel: exit %d %s", q.Code, q.Stderr)
	}
	c.WaitEnded(id, 30*time.Second)
	if q := c.slurmCmd(bin, dir, "sacct", "-n", "-P", "-X", "-j", strconv.FormatUint(id, 10), "-o", "JobName"); q.Code != 0 || q.Stdout != name+"\n" {
		t.Errorf("sacct -o JobName: exit %d, printed %q, want %q", q.Code, q.Stdout, name+"\n")
	}
}
