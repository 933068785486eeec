package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestSnakemake runs a real pipeline engine, Debian's Snakemake (7.21),
// against a cluster with the Slurm names on its PATH, in both ways an
// engine drives Slurm: Snakemake's own slurm executor (sbatch --wrap,
// sacct to poll, each rule through `srun -n1` inside its job) and the
// generic --cluster submit with a sacct status script and scancel.
func TestSnakemake(t *testing.T) {
	needCommands(t, "snakemake")
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "4G"}}})
	root := mustOpenDir(t, "corral-smk-", 0o755)
	t.Setenv(api.SocketEnv, c.Socket)
	if os.Getenv("USER") == "" {
		t.Setenv("USER", "root") // the slurm executor reads it to guess the account
	}

	t.Run("--slurm: sbatch, sacct, srun -n1 in each job", func(t *testing.T) {
		dir := workflowDir(t, root, "slurm")
		// More than one status check a second makes Snakemake 7.21 poll
		// every 33 s; one a second keeps the test short.
		runSnakemake(t, c, dir, "--slurm", "-j", "4", "--max-status-checks-per-second", "1",
			"--default-resources", "runtime=5", "mem_mb=600")
		checkMerged(t, dir, "step=0") // the rule ran as the job's first srun step
		checkJobs(t, c, dir, "snakejob_")
	})

	t.Run("--cluster sbatch --parsable, --cluster-status sacct", func(t *testing.T) {
		dir := workflowDir(t, root, "cluster")
		runSnakemake(t, c, dir, clusterArgs()...)
		checkMerged(t, dir, "step=none") // the batch script ran the rule itself
		checkJobs(t, c, dir, "smk-")
	})

	t.Run("--cluster-cancel scancel on Ctrl-C", func(t *testing.T) {
		dir := workflowDir(t, root, "cancel")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// The target comes first: --default-resources would take it as a resource.
		cmd := snakemakeCmd(ctx, dir, append([]string{"never.txt"}, clusterArgs()...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		id := waitJobNamed(t, c, dir, "smk-forever", 2*time.Minute)
		c.WaitState(id, api.StateRunning, time.Minute)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if j := c.WaitEnded(id, time.Minute); j.State != api.StateCancelled {
			t.Fatalf("after snakemake's Ctrl-C (%v) the rule's job %d ended %s, want CANCELLED\n%s", err, id, j.State, cmd.Stdout)
		}
	})
}

// clusterArgs is the generic cluster mode as a Snakemake profile for
// Slurm spells it: the rule's threads, memory and time as sbatch options.
func clusterArgs() []string {
	return []string{"-j", "4",
		"--cluster", "sbatch --parsable -c {threads} --mem {resources.mem_mb} -t {resources.runtime} -J smk-{rule} -o logs/{rule}-%j.out",
		"--cluster-status", "./cluster-status.sh", "--cluster-cancel", "scancel",
		"--max-status-checks-per-second", "5", "--latency-wait", "5",
		"--default-resources", "runtime=5", "mem_mb=300"}
}

// workflowDir is a fresh directory under root holding the test's
// Snakefile, status script, a logs directory and the Slurm names, which
// it puts first on the PATH: the jobs see them there, since the submit
// directory is bound into them and the rest of /tmp is private.
func workflowDir(t *testing.T, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", slurmBin(t, dir)+":"+os.Getenv("PATH"))
	for _, f := range []string{"Snakefile", "cluster-status.sh"} {
		b, err := os.ReadFile(filepath.Join("testdata", "snakemake", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func snakemakeCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "snakemake", args...)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd
}

// runSnakemake runs the workflow to its end and fails the test, with
// Snakemake's output and the cluster's logs, if it does not succeed.
func runSnakemake(t *testing.T, c *Cluster, dir string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := snakemakeCmd(ctx, dir, args...)
	if err := cmd.Run(); err != nil {
		t.Fatalf("snakemake %q: %v\n%s\nctld:\n%s", args, err, cmd.Stdout, c.Logs("ctld"))
	}
}

// checkMerged checks the fan-in's output: every sample, counted by a
// job of two CPUs, in order.
func checkMerged(t *testing.T, dir, step string) {
	t.Helper()
	var want []string
	for _, s := range []string{"a", "b", "c"} {
		want = append(want, s+" threads=2 cpus=2 "+step)
	}
	if got := readLines(t, filepath.Join(dir, "merged.txt")); !slices.Equal(got, want) {
		t.Errorf("merged.txt: %q, want %q", got, want)
	}
}

// checkJobs checks sacct's record of the workflow's jobs (named with
// prefix): seven, all COMPLETED, the count rule's with 2 CPUs.
func checkJobs(t *testing.T, c *Cluster, dir, prefix string) {
	t.Helper()
	bin := filepath.Join(dir, "slurm")
	r := c.slurmCmd(bin, dir, "sacct", "-P", "-n", "-X", "-o", "JobName,State,AllocCPUS")
	if r.Code != 0 {
		t.Fatalf("sacct: %d %s", r.Code, r.Stderr)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		n++
		if f[1] != "COMPLETED" || strings.Contains(f[0], "count") != (f[2] == "2") {
			t.Errorf("sacct line %q: want COMPLETED, 2 CPUs for count jobs only", line)
		}
	}
	if n != 7 {
		t.Errorf("sacct lists %d jobs named %s*, want 7:\n%s", n, prefix, r.Stdout)
	}
}

// waitJobNamed waits for a job of that name and returns its ID.
func waitJobNamed(t *testing.T, c *Cluster, dir, name string, timeout time.Duration) uint64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := c.slurmCmd(filepath.Join(dir, "slurm"), dir, "squeue", "-h", "-o", "%i %j")
		for _, line := range strings.Split(r.Stdout, "\n") {
			if id, n, ok := strings.Cut(line, " "); ok && n == name {
				v, err := strconv.ParseUint(id, 10, 64)
				if err == nil {
					return v
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job named %s within %s", name, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
