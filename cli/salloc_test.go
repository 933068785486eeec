package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// salloc waits for the allocation, runs its command here with the
// allocation's variables, releases it with the command's status and
// exits with it, saying each step as Slurm's salloc does.
func TestSallocRunsItsCommandInTheAllocation(t *testing.T) {
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1"}, &fakeStepNode{name: "n2"})
	fc.pending = 1
	var stdout, stderr bytes.Buffer
	env := sallocEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		client: func() *api.Client { return api.NewClient(fc.socket) }}
	code := runSalloc(context.Background(), env, []string{"-N2", "-n4", "-J", "dbg", "/bin/sh", "-c",
		`echo "$SLURM_JOB_ID $SLURM_JOB_NODELIST $SLURM_NNODES $SLURM_NTASKS $SLURM_JOB_CPUS_PER_NODE"; exit 4`})
	if code != 4 {
		t.Fatalf("exit %d, want the command's 4; stderr %q", code, stderr.String())
	}
	if want := "5 n[1-2] 2 4 4(x2)\n"; stdout.String() != want {
		t.Errorf("the command saw %q, want %q", stdout.String(), want)
	}
	want := "salloc: Pending job allocation 5\nsalloc: job 5 queued and waiting for resources\n" +
		"salloc: job 5 has been allocated resources\nsalloc: Granted job allocation 5\nsalloc: Relinquishing job allocation 5\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.submitted) != 1 || !fc.submitted[0].Allocation || fc.submitted[0].Nodes != 2 || fc.submitted[0].Name != "dbg" {
		t.Errorf("submitted %+v", fc.submitted)
	}
	if len(fc.released) != 1 || fc.released[0].ExitCode != 4 {
		t.Errorf("releases %+v, want one with exit code 4", fc.released)
	}
}

// An allocation the scheduler starts at its first look is granted
// without a word of waiting, as Slurm's salloc and srun say nothing
// then: looks that find it not yet planned (PENDING, reason None) are
// not a wait for resources.
func TestAllocationStartedAtOnceSaysNoWait(t *testing.T) {
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1"})
	fc.undecided = 2
	var stderr bytes.Buffer
	env := sallocEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		client: func() *api.Client { return api.NewClient(fc.socket) }}
	if code := runSalloc(context.Background(), env, []string{"true"}); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if want := "salloc: Granted job allocation 5\nsalloc: Relinquishing job allocation 5\n"; stderr.String() != want {
		t.Errorf("salloc said %q, want %q", stderr.String(), want)
	}
	fc.mu.Lock()
	looks := len(fc.waits)
	fc.mu.Unlock()
	if looks != 2 {
		t.Errorf("%d looks before the grant, want the 2 that found it undecided", looks)
	}

	n1 := &fakeStepNode{name: "n1", ranks: []int{0}, play: splitLinesPlayer(func(int) int { return 0 })}
	fc = newFakeStepCluster(t, n1)
	fc.undecided = 2
	code, _, errs := fc.srun(t, "", nil, "-n1", "--input=none", "true")
	if code != 0 || strings.Contains(errs, "queued") || strings.Contains(errs, "allocated resources") {
		t.Errorf("srun: exit %d, stderr %q; want 0 and no word of waiting", code, errs)
	}
}

// A command that cannot be run is exit status 127, and the allocation is
// released with it.
func TestSallocCommandNotFound(t *testing.T) {
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1"})
	var stderr bytes.Buffer
	env := sallocEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		client: func() *api.Client { return api.NewClient(fc.socket) }}
	if code := runSalloc(context.Background(), env, []string{"/no/such/command"}); code != 127 ||
		!strings.Contains(stderr.String(), "salloc: error: /no/such/command: no such file or directory") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.released) != 1 || fc.released[0].ExitCode != 127 {
		t.Errorf("releases %+v", fc.released)
	}
}

// The command's SLURM_* variables as Slurm 22.05's salloc set them on a
// loopback cluster of two 2-CPU nodes (SLURM_TASKS_PER_NODE is what Open
// MPI's mpirun reads for its slots), for the same options.
func TestAllocEnvironAsSlurms(t *testing.T) {
	for _, tc := range []struct {
		spec  api.JobSpec
		nodes []string
		cpus  int
		want  map[string]string // "" for a variable that must be unset
	}{
		{api.JobSpec{Nodes: 2}, []string{"n1", "n2"}, 1,
			map[string]string{"SLURM_TASKS_PER_NODE": "1(x2)", "SLURM_JOB_CPUS_PER_NODE": "1(x2)", "SLURM_NTASKS": ""}},
		{api.JobSpec{CPUsPerTask: 2, CPUs: 2}, []string{"n1"}, 2,
			map[string]string{"SLURM_TASKS_PER_NODE": "1", "SLURM_CPUS_PER_TASK": "2", "SLURM_NTASKS": ""}},
		{api.JobSpec{Ntasks: 2, CPUsPerTask: 1, CPUs: 2}, []string{"n1"}, 2,
			map[string]string{"SLURM_TASKS_PER_NODE": "2", "SLURM_NTASKS": "2", "SLURM_NPROCS": "2"}},
		{api.JobSpec{Nodes: 2, NtasksPerNode: 1}, []string{"n1", "n2"}, 1,
			map[string]string{"SLURM_TASKS_PER_NODE": "1(x2)", "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1"}},
		{api.JobSpec{Ntasks: 3, CPUs: 2}, []string{"n1", "n2"}, 2,
			map[string]string{"SLURM_TASKS_PER_NODE": "2,1", "SLURM_NTASKS": "3"}},
		{api.JobSpec{Nodes: 2, Ntasks: 3, NtasksPerNode: 2, CPUs: 2}, []string{"n1", "n2"}, 2,
			map[string]string{"SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_NTASKS": "4"}},
	} {
		a := &api.Allocation{JobID: 7, Nodes: tc.nodes, CPUs: tc.cpus, Partition: "batch", ClusterName: "corral"}
		got := map[string]string{}
		for _, kv := range allocEnviron([]string{"HOME=/root"}, &tc.spec, a) {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
		tc.want["SLURM_JOB_PARTITION"], tc.want["SLURM_CLUSTER_NAME"], tc.want["HOME"] = "batch", "corral", "/root"
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%+v: %s=%q, want %q", tc.spec, k, got[k], v)
			}
		}
	}
}

// salloc's own options come out of its command line before the job's
// are read: with their values, attached or not, wherever they stand
// among the job's (whose separate values stay with them), and never
// from the command's own arguments.
func TestTakeSallocOwn(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		rest      []string
		immediate time.Duration
		warnings  int
	}{
		{[]string{"-N2", "--bell", "-p", "batch", "srun", "-I", "x"}, []string{"-N2", "-p", "batch", "srun", "-I", "x"}, 0, 0},
		{[]string{"-I", "-J", "x", "sh"}, []string{"-J", "x", "sh"}, time.Nanosecond, 0},
		{[]string{"--immediate=5", "--part", "gpu", "sh"}, []string{"--part", "gpu", "sh"}, 5 * time.Second, 0},
		{[]string{"-HI3", "sh"}, []string{"-H", "sh"}, 3 * time.Second, 0},
		{[]string{"-c", "2", "-K", "--x11", "--no-bell", "--", "sh"}, []string{"-c", "2", "--", "sh"}, 0, 2},
		{[]string{"-c2", "-t", "5", "sh"}, []string{"-c2", "-t", "5", "sh"}, 0, 0},
		{[]string{"--power", "level", "-c2", "sh"}, []string{"-c2", "sh"}, 0, 1},
		{[]string{"--power=level", "sh", "--power", "x"}, []string{"sh", "--power", "x"}, 0, 1},
	} {
		own, rest, err := takeSallocOwn(tc.args)
		if err != nil || !slices.Equal(rest, tc.rest) || own.immediate != tc.immediate || len(own.warnings) != tc.warnings {
			t.Errorf("%q: rest %q, immediate %v, warnings %q, %v; want %q, %v, %d", tc.args, rest, own.immediate, own.warnings, err,
				tc.rest, tc.immediate, tc.warnings)
		}
	}
	for _, bad := range [][]string{{"--no-shell", "sh"}, {"--immediate=soon", "sh"}, {"--bell=1", "sh"}, {"--power"}} {
		if _, _, err := takeSallocOwn(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// salloc -I gives up on an allocation not granted at once, as Slurm's
// salloc says it, and cancels it.
func TestSallocImmediate(t *testing.T) {
	fc := newFakeStepCluster(t, &fakeStepNode{name: "n1"})
	fc.pending = 100
	var stderr bytes.Buffer
	env := sallocEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr,
		client: func() *api.Client { return api.NewClient(fc.socket) }}
	if code := runSalloc(context.Background(), env, []string{"-I", "true"}); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	if want := "salloc: error: Unable to allocate resources: Requested nodes are busy\nsalloc: Job allocation 5 has been revoked.\n"; stderr.String() != want {
		t.Errorf("salloc -I said %q, want %q", stderr.String(), want)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.released) != 1 || fc.released[0].ExitCode != 1 {
		t.Errorf("releases %+v, want the pending allocation released", fc.released)
	}
}
