package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// envOf is the environment a launch gets, as a map.
func envOf(l api.LaunchRequest) map[string]string {
	out := map[string]string{}
	for _, kv := range shim.Environment(&shim.Job{Launch: l, Node: "n1"}) {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := out[k]; dup {
			out[k] = "DUPLICATE"
			continue
		}
		out[k] = v
	}
	return out
}

func TestEnvironmentExport(t *testing.T) {
	submitter := []string{"PATH=/opt/bin", "FOO=1", "BAR=2", "SLURM_CONF=/etc/x", "CORRAL_SOCKET=/s", "HOME=/wrong"}
	tests := []struct {
		name    string
		export  *api.EnvExport
		present map[string]string // "" value: must be absent
	}{
		{"ALL", nil, map[string]string{"FOO": "1", "BAR": "2", "PATH": "/opt/bin", "SLURM_CONF": "/etc/x", "HOME": "/home/u"}},
		{"ALL plus values", &api.EnvExport{Mode: api.ExportAll, Vars: []string{"FOO=9", "NEW=x"}},
			map[string]string{"FOO": "9", "NEW": "x", "BAR": "2"}},
		{"NONE", &api.EnvExport{Mode: api.ExportNone},
			map[string]string{"FOO": "", "BAR": "", "SLURM_CONF": "/etc/x", "CORRAL_SOCKET": "/s", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/home/u", "USER": "u"}},
		{"NIL", &api.EnvExport{Mode: api.ExportNil}, map[string]string{"FOO": "", "PATH": "", "SLURM_CONF": "/etc/x", "SLURM_JOB_ID": "7"}},
		{"LIST", &api.EnvExport{Mode: api.ExportList, Vars: []string{"FOO", "BAZ=3", "MISSING"}},
			map[string]string{"FOO": "1", "BAZ": "3", "BAR": "", "MISSING": "", "SLURM_CONF": "/etc/x", "HOME": "/home/u"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := envOf(api.LaunchRequest{JobID: 7, Name: "j", User: "u", Home: "/home/u", Env: submitter, Export: tt.export, CPUs: 1})
			for k, want := range tt.present {
				got, ok := env[k]
				if want == "" && ok || want != "" && got != want {
					t.Errorf("%s=%q (set %v), want %q", k, got, ok, want)
				}
			}
		})
	}
	env := envOf(api.LaunchRequest{JobID: 12, Restarts: 2, CPUs: 1,
		Array: &api.LaunchArray{JobID: 10, TaskID: 4, TaskCount: 3, TaskMin: 0, TaskMax: 8, TaskStep: 4}})
	for k, want := range map[string]string{"SLURM_ARRAY_JOB_ID": "10", "SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3",
		"SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "8", "SLURM_ARRAY_TASK_STEP": "4", "CORRAL_ARRAY_TASK_ID": "4",
		"CORRAL_ARRAY_JOB_ID": "10", "SLURM_RESTART_COUNT": "2", "CORRAL_RESTART_COUNT": "2", "SLURM_JOB_ID": "12"} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	if _, ok := envOf(api.LaunchRequest{JobID: 1, CPUs: 1})["SLURM_ARRAY_TASK_ID"]; ok {
		t.Error("a job outside an array has SLURM_ARRAY_TASK_ID")
	}
}

func TestSignalTargets(t *testing.T) {
	// 100 is corral-init; 101 the script (oldest child); 102 an orphan it
	// adopted; 103 and 104 the script's children, 105 a grandchild; 106
	// a step's task libcontainer execed (in the job's PID namespace, its
	// parent the runner outside), 107 its child; 108 a step's task
	// corral-init spawned (an older one than the script: an extern
	// node's, say), 109 its child; 200 is not in the job.
	const jobNS = "pid:[4026532001]"
	procs := []shim.Proc{{PID: 100, PPID: 50, Start: 1, NS: jobNS}, {PID: 101, PPID: 100, Start: 5, NS: jobNS}, {PID: 102, PPID: 100, Start: 9, NS: jobNS},
		{PID: 103, PPID: 101, Start: 6, NS: jobNS}, {PID: 104, PPID: 101, Start: 7, NS: jobNS}, {PID: 105, PPID: 103, Start: 8, NS: jobNS},
		{PID: 106, PPID: 60, Start: 10, NS: jobNS}, {PID: 107, PPID: 106, Start: 11, NS: jobNS},
		{PID: 108, PPID: 100, Start: 4, NS: jobNS}, {PID: 109, PPID: 108, Start: 12, NS: jobNS},
		{PID: 60, PPID: 1, Start: 3, NS: "pid:[4026531836]"}, {PID: 200, PPID: 1, Start: 2, NS: "pid:[4026531836]"}}
	for _, tt := range []struct {
		scope api.SignalScope
		want  []int
	}{
		{api.SignalBatch, []int{101}},                    // -b, B:: the script alone
		{api.SignalFull, []int{101, 102, 103, 104, 105}}, // -f: the script's tree (init's), orphans included
		{api.SignalSteps, []int{106, 107, 108, 109}},     // default: the steps, not the script's tree
	} {
		got := shim.SignalTargets(procs, 100, []int{108}, tt.scope)
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s signals %v, want %v", tt.scope, got, tt.want)
		}
	}
	if got := shim.Descendants(procs, 60); !slices.Equal(got, []int{106, 107}) {
		t.Errorf("the step whose runner is 60: %v, want its task 106 and the task's child 107", got)
	}
	for _, scope := range []api.SignalScope{api.SignalBatch, api.SignalFull, api.SignalSteps} {
		if got := shim.SignalTargets(procs, 300, nil, scope); got != nil {
			t.Errorf("no such init, %s: %v", scope, got)
		}
	}
	p, ok := shim.ParseStat(42, "42 (a b) c)) S 7 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 10\n")
	if !ok || p.PPID != 7 || p.Start != 12345 {
		t.Errorf("ParseStat = %+v, %v", p, ok)
	}
}

// Array tasks write %A_%a files and see their SLURM_ARRAY_* variables.
func TestArrayTaskOutput(t *testing.T) {
	tj := mustJob(t, `echo "$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $CORRAL_ARRAY_TASK_MAX"`+"\n", func(j *shim.Job) {
		j.Launch.Output = "arr-%A_%a.out"
		j.Launch.Array = &api.LaunchArray{JobID: 900, TaskID: 3, TaskCount: 4, TaskMin: 0, TaskMax: 3, TaskStep: 1}
	})
	if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted {
		t.Fatalf("result %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(tj.work, "arr-900_3.out"))
	if err != nil || string(b) != "900 3 4 3\n" {
		t.Fatalf("arr-900_3.out = %q, %v", b, err)
	}
}

func TestOpenModeAndInput(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(j *shim.Job)
		existing string
		want     string
	}{
		{"truncate by default", nil, "old\n", "new\n"},
		{"append", func(j *shim.Job) { j.Launch.OpenMode = "append" }, "old\n", "old\nnew\n"},
		{"a requeued run appends", func(j *shim.Job) { j.Launch.Restarts = 1 }, "old\n", "old\nnew\n"},
		{"a requeued run told to truncate", func(j *shim.Job) { j.Launch.Restarts = 1; j.Launch.OpenMode = "truncate" }, "old\n", "new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tj := mustJob(t, "echo new\n", tt.edit)
			out := filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID))
			writeAsNobody(t, out, tt.existing, 0o644)
			if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted {
				t.Fatalf("result %+v", r)
			}
			if got := tj.output(t); got != tt.want {
				t.Errorf("output %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("input", func(t *testing.T) {
		tj := mustJob(t, "tr a-z A-Z\n", func(j *shim.Job) { j.Launch.Input = "in-%j.txt" })
		writeAsNobody(t, filepath.Join(tj.work, fmt.Sprintf("in-%d.txt", tj.job.Launch.JobID)), "hello\n", 0o600)
		if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted || tj.output(t) != "HELLO\n" {
			t.Fatalf("result %+v, output %q", r, tj.output(t))
		}
	})
	t.Run("input the user cannot read", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret") // a root-only directory
		os.WriteFile(secret, []byte("x"), 0o600)
		tj := mustJob(t, "cat\n", func(j *shim.Job) { j.Launch.Input = secret })
		r := tj.run(t, shim.Controls{})
		if r.State != api.StateFailed || !strings.Contains(r.Message, "cannot be opened as the job's user") {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("no input reads /dev/null", func(t *testing.T) {
		tj := mustJob(t, "cat; echo done\n", nil)
		if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted || tj.output(t) != "done\n" {
			t.Fatalf("result %+v, output %q", r, tj.output(t))
		}
	})
}

func writeAsNobody(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, containertest.Nobody, containertest.Nobody); err != nil {
		t.Fatal(err)
	}
}

// --signal reaches the batch script with B:, before the time limit;
// without B: only the steps get it (TestSignalReachesSteps), so neither
// the script nor its children see it and the job runs into its limit.
func TestSignalBeforeTimeLimit(t *testing.T) {
	tests := []struct {
		name, script string
		batchOnly    bool
		state        api.JobState
		want         string
	}{
		{"B: the script traps it", "trap 'echo script got USR1; exit 0' USR1\nsleep 30 &\nwait\n", true, api.StateCompleted, "script got USR1\n"},
		{"without B: not the script nor its children",
			"trap 'echo script got USR1' USR1\nsh -c 'trap \"echo child got USR1\" USR1; sleep 30 & wait'\n",
			false, api.StateTimeout, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := mustJob(t, tt.script, func(j *shim.Job) {
				j.Launch.TimeLimit = 3
				j.Launch.Signal = &api.JobSignal{Signal: 10, Before: 2, BatchOnly: tt.batchOnly}
			})
			r := tj.run(t, shim.Controls{})
			if r.State != tt.state || tj.output(t) != tt.want {
				t.Fatalf("result %s %+v, output %q, want %s and %q", r.State, r, tj.output(t), tt.state, tt.want)
			}
		})
	}
}
