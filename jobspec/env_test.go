package jobspec

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMain keeps the suite independent of the caller's SBATCH_* variables
// (Parse reads the process environment).
func TestMain(m *testing.M) {
	for _, v := range EnvVariables() {
		os.Unsetenv(v[0])
	}
	os.Exit(m.Run())
}

func envOf(kv ...string) LookupFunc {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

func mustParseEnv(t *testing.T, env LookupFunc, s *scripts, args ...string) *Request {
	t.Helper()
	r, err := ParseWith(args, s.read, env, time.Now())
	if err != nil {
		t.Fatalf("ParseWith(%q): %v", args, err)
	}
	return r
}

// The command line beats the environment, which beats #SBATCH lines.
func TestEnvPrecedence(t *testing.T) {
	s := newScripts("job.sh", "#!/bin/sh\n#SBATCH -p script -t 5 -J fromscript\n#SBATCH --account=acct1\ntrue\n")
	env := envOf("SBATCH_PARTITION", "env", "SBATCH_TIMELIMIT", "1:00:00", "SBATCH_ACCOUNT", "acct2")
	r := mustParseEnv(t, env, s, "job.sh")
	if sp := r.Spec; sp.Partition != "env" || sp.TimeLimit != 3600 || sp.Name != "fromscript" || sp.Account != "acct2" {
		t.Errorf("env over script: partition %q time %d name %q account %q", sp.Partition, sp.TimeLimit, sp.Name, sp.Account)
	}
	r = mustParseEnv(t, env, s, "-p", "cmd", "job.sh")
	if r.Spec.Partition != "cmd" || r.Spec.TimeLimit != 3600 {
		t.Errorf("command line over env: partition %q time %d", r.Spec.Partition, r.Spec.TimeLimit)
	}
	r = mustParseEnv(t, nil, s, "job.sh")
	if r.Spec.Partition != "script" || r.Spec.TimeLimit != 300 {
		t.Errorf("without env: partition %q time %d", r.Spec.Partition, r.Spec.TimeLimit)
	}
}

func TestEnvFlagsAndValues(t *testing.T) {
	s := newScripts("job.sh", plain)
	r := mustParseEnv(t, envOf("SBATCH_REQUEUE", "1", "SBATCH_EXCLUSIVE", "", "SBATCH_MEM_PER_NODE", "2G",
		"SBATCH_ARRAY_INX", "0-3%2", "SBATCH_WAIT", "yes", "SBATCH_JOB_NAME", "pipe"), s, "job.sh")
	sp := r.Spec
	if sp.Requeue == nil || !*sp.Requeue || sp.Exclusive == "" || sp.MemBytes != 2<<30 || sp.Array == nil || !r.Wait || sp.Name != "pipe" {
		t.Errorf("requeue %v exclusive %q mem %d array %v wait %v name %q", sp.Requeue, sp.Exclusive, sp.MemBytes, sp.Array, r.Wait, sp.Name)
	}
	r = mustParseEnv(t, envOf("SBATCH_NO_REQUEUE", ""), s, "job.sh")
	if r.Spec.Requeue == nil || *r.Spec.Requeue {
		t.Errorf("SBATCH_NO_REQUEUE: requeue %v, want false", r.Spec.Requeue)
	}
	// Ignored options warn as they do on the command line.
	r = mustParseEnv(t, envOf("SBATCH_WCKEY", "w1"), s, "job.sh")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "--wckey is ignored") {
		t.Errorf("warnings %q", r.Warnings)
	}
	// A variable sbatch does not read changes nothing.
	r = mustParseEnv(t, envOf("SBATCH_CPUS_PER_TASK", "8"), s, "job.sh")
	if r.Spec.CPUs != 1 {
		t.Errorf("SBATCH_CPUS_PER_TASK (not an sbatch input variable) set %d CPUs", r.Spec.CPUs)
	}
}

func TestEnvErrors(t *testing.T) {
	s := newScripts("job.sh", plain)
	for _, tc := range []struct {
		env  LookupFunc
		want string
	}{
		{envOf("SBATCH_TIMELIMIT", "soon"), "environment variable SBATCH_TIMELIMIT=soon: "},
		{envOf("SBATCH_MEM_PER_NODE", "lots"), "environment variable SBATCH_MEM_PER_NODE=lots: "},
		{envOf("SBATCH_PARTITION", ""), "environment variable SBATCH_PARTITION is set but empty"},
		{envOf("SBATCH_OPEN_MODE", "sideways"), "environment variable SBATCH_OPEN_MODE=sideways: "},
	} {
		_, err := ParseWith([]string{"job.sh"}, s.read, tc.env, time.Now())
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line starting %q", err, tc.want)
		}
	}
}

// Every variable names an option of the table.
func TestEnvVariablesNameOptions(t *testing.T) {
	for _, v := range EnvVariables() {
		if optionByName(v[1]) == nil {
			t.Errorf("%s names --%s, which is not an option", v[0], v[1])
		}
		if !strings.HasPrefix(v[0], "SBATCH_") {
			t.Errorf("%s is not an sbatch input variable", v[0])
		}
	}
}

// A variable does what its option does on the command line.
func TestEnvMatchesCommandLine(t *testing.T) {
	s := newScripts("job.sh", plain)
	for _, tc := range []struct {
		name, value string
		args        []string
	}{
		{"SBATCH_EXCLUSIVE", "user", []string{"--exclusive=user"}},
		{"SBATCH_EXCLUSIVE", "1", []string{"--exclusive"}},
		{"SBATCH_GRES", "gpu:a100:2", []string{"--gres=gpu:a100:2"}},
		{"SBATCH_GPUS_PER_NODE", "2", []string{"--gpus-per-node=2"}},
		{"SBATCH_MEM_PER_CPU", "512M", []string{"--mem-per-cpu=512M"}},
		{"SBATCH_SIGNAL", "B:USR1@90", []string{"--signal=B:USR1@90"}},
		{"SBATCH_EXPORT", "NONE", []string{"--export=NONE"}},
		{"SBATCH_OUTPUT", "out-%j.txt", []string{"-o", "out-%j.txt"}},
		{"SBATCH_ERROR", "err-%j.txt", []string{"-e", "err-%j.txt"}},
		{"SBATCH_INPUT", "in.txt", []string{"-i", "in.txt"}},
		{"SBATCH_QOS", "high", []string{"--qos=high"}},
		{"SBATCH_CONSTRAINT", "avx512", []string{"-C", "avx512"}},
		{"SBATCH_OPEN_MODE", "append", []string{"--open-mode=append"}},
	} {
		fromEnv := mustParseEnv(t, envOf(tc.name, tc.value), s, "job.sh")
		fromArgs := mustParseEnv(t, nil, s, append(tc.args, "job.sh")...)
		if !reflect.DeepEqual(fromEnv.Spec, fromArgs.Spec) || !reflect.DeepEqual(fromEnv.Warnings, fromArgs.Warnings) {
			t.Errorf("%s=%s gives\n%+v %q\nwant (as %q)\n%+v %q", tc.name, tc.value, fromEnv.Spec, fromEnv.Warnings, tc.args, fromArgs.Spec, fromArgs.Warnings)
		}
	}
}
