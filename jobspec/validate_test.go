package jobspec

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// validSpec is the smallest spec Validate accepts: the controller fills
// in the rest.
func validSpec() api.JobSpec {
	return api.JobSpec{Script: "#!/bin/sh\ntrue\n", CPUs: 1, WorkDir: "/tmp"}
}

// TestValidateOneRuleEach: each rule refuses with its one line, the words
// the controller has always answered with (docs/api.md lists them).
func TestValidateOneRuleEach(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	far := now.Add(11 * 366 * 24 * time.Hour)
	task := 3
	for _, tt := range []struct {
		name string
		mut  func(*api.JobSpec)
		want string // the whole message; "" accepted
	}{
		{"valid", func(*api.JobSpec) {}, ""},
		{"every option in range", func(s *api.JobSpec) {
			s.Nodes, s.Nice, s.Umask, s.Name, s.OpenMode, s.Input = 2, -5, "0027", "train.1", "append", "in-%j"
			s.Signal = &api.JobSignal{Signal: 10, Before: 60}
			s.Export = &api.EnvExport{Mode: api.ExportList, Vars: []string{"A", "B_2=x"}}
			s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 9, Step: 1}}, MaxRunning: 2}
			s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 7, ArrayTask: &task}, {Type: api.DependSingleton}}}
			s.Gres = []api.GresRequest{{Name: "gpu", Count: 2}}
		}, ""},
		{"empty script", func(s *api.JobSpec) { s.Script = " \n" }, "script is empty"},
		{"NUL script", func(s *api.JobSpec) { s.Script = "#!/bin/sh\x00" }, "script contains NUL bytes: it is not a text file"},
		{"allocation", func(s *api.JobSpec) { s.Script, s.Allocation = "", true }, ""},
		{"allocation with a script", func(s *api.JobSpec) { s.Allocation = true }, "an allocation (salloc) has no batch script"},
		{"allocation array", func(s *api.JobSpec) {
			s.Script, s.Allocation, s.Array = "", true, &api.JobArray{Ranges: []api.ArrayRange{{First: 1, Last: 2, Step: 1}}}
		}, "an allocation (salloc) cannot be a job array"},
		{"no CPUs", func(s *api.JobSpec) { s.CPUs = 0 }, "cpus must be at least 1 (got 0)"},
		{"too many CPUs", func(s *api.JobSpec) { s.CPUs = MaxCPUs + 1 }, "cpus=65537 is out of range: it must be between 0 and 65536"},
		{"negative nodes", func(s *api.JobSpec) { s.Nodes = -1 }, "nodes must be at least 1 (got -1)"},
		{"negative memory", func(s *api.JobSpec) { s.MemBytes = -1 }, "memory must not be negative (got -1 bytes)"},
		{"negative shm", func(s *api.JobSpec) { s.ShmBytes = -2 }, "shm size must not be negative (got -2 bytes)"},
		{"negative time", func(s *api.JobSpec) { s.TimeLimit = -3 }, "time limit must not be negative (got -3 seconds)"},
		{"nice too low", func(s *api.JobSpec) { s.Nice = -MaxNice - 1 }, "nice=-2147483646 is out of range: it must be between -2147483645 and 2147483645"},
		{"relative work dir", func(s *api.JobSpec) { s.WorkDir = "rel" }, `work directory must be an absolute path (got "rel")`},
		{"long env entry", func(s *api.JobSpec) { s.Env = []string{"A=1", "B=" + strings.Repeat("x", api.MaxFieldBytes)} },
			"env[1] is 65538 bytes long; at most 65536 are allowed"},
		{"huge script once", func(s *api.JobSpec) { s.Script = strings.Repeat("#", api.MaxScriptBytes+1) },
			"script is 2097153 bytes long; at most 2097152 are allowed"},
		{"gres count", func(s *api.JobSpec) { s.GPUs = []api.GresRequest{{Name: "gpu", Count: MaxGres + 1}} },
			"gpus gpu count 65537 is out of range: it must be between 0 and 65536"},
		{"begin far ahead", func(s *api.JobSpec) { s.Begin = &far }, "begin time 2037-01-09T00:00:00Z is more than ten years ahead"},
		{"umask", func(s *api.JobSpec) { s.Umask = "0999" }, `umask "0999" is not an octal mode between 0000 and 0777`},
		{"env entry", func(s *api.JobSpec) { s.Env = []string{"PATH=/bin", "junk", "=x"} }, `environment entry "junk" is not KEY=VALUE`},
		{"array without indexes", func(s *api.JobSpec) { s.Array = &api.JobArray{} }, "invalid --array: no indexes"},
		{"array overlapping", func(s *api.JobSpec) {
			s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 5, Step: 1}, {First: 5, Last: 6, Step: 1}}}
		}, "invalid --array: ranges must be sorted, disjoint and within 0-4000000 with steps of at least 1 (got 5-6:1)"},
		{"array %N", func(s *api.JobSpec) {
			s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 1, Step: 1}}, MaxRunning: -1}
		}, "invalid --array: the %N running limit must not be negative (got -1)"},
		{"dependency without conditions", func(s *api.JobSpec) { s.Dependency = &api.Dependency{} }, "invalid --dependency: no conditions"},
		{"dependency type", func(s *api.JobSpec) {
			s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: "before", JobID: 1}}}
		}, `invalid --dependency: unknown type "before" (valid: after, afterany, afterok, afternotok, aftercorr, singleton)`},
		{"dependency without job", func(s *api.JobSpec) {
			s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterAny}}}
		}, "invalid --dependency: afterany needs a job ID"},
		{"dependency delay", func(s *api.JobSpec) {
			s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 1, Delay: 5}}}
		}, "invalid --dependency: a delay (+minutes) is only allowed with after, and must not be negative"},
		{"singleton with a job", func(s *api.JobSpec) {
			s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependSingleton, JobID: 1}}}
		}, "invalid --dependency: singleton names no job"},
		{"signal", func(s *api.JobSpec) { s.Signal = &api.JobSignal{Signal: 65, Before: 1} },
			"invalid --signal: signal 65 must be 1 to 64 and the time before the limit 0 to 65535 seconds (got 1)"},
		{"export mode", func(s *api.JobSpec) { s.Export = &api.EnvExport{Mode: "SOME"} }, `invalid --export mode "SOME" (valid: ALL, NONE, NIL, LIST)`},
		{"export name", func(s *api.JobSpec) { s.Export = &api.EnvExport{Mode: api.ExportList, Vars: []string{"1A=x"}} },
			`invalid --export entry "1A=x": "1A" is not a variable name`},
		{"open mode", func(s *api.JobSpec) { s.OpenMode = "rw" }, `invalid --open-mode "rw" (valid: append, truncate)`},
		{"input", func(s *api.JobSpec) { s.Input = "a\nb" }, `invalid --input "a\nb": give a file name pattern`},
		{"job name", func(s *api.JobSpec) { s.Name = "a\nb" },
			`invalid --job-name "a\nb": use 1 to 1024 bytes of printable text, without newlines, tabs or other control characters`},
		{"nodes in -w and -x", func(s *api.JobSpec) { s.NodeList, s.Exclude = []string{"n1", "n2"}, []string{"n2"} },
			"--nodelist and --exclude both name n2"},
		{"mount", func(s *api.JobSpec) { s.Mounts = []api.Mount{{Source: "/data", Target: "/"}} },
			"invalid --mount /data:/: use absolute paths, not the container's root"},
		{"fGPU and GPUs", func(s *api.JobSpec) { s.FGPUHundredths, s.GPUs = 50, []api.GresRequest{{Name: "gpu", Count: 1}} },
			"--fgpu and whole GPUs (--gpus, --gres=gpu, --gpus-per-node, --gpus-per-task) are mutually exclusive"},
		{"fGPU range", func(s *api.JobSpec) { s.FGPUHundredths = -1 }, "fGPU per node must be between 0.01 and 100000 (got -0.01)"},
		{"two GPU types", func(s *api.JobSpec) {
			s.GPUsPerNode = []api.GresRequest{{Name: "gpu", Type: "a100", Count: 1}, {Name: "gpu", Type: "h100", Count: 1}}
		}, "GPUs of more than one type (a100 and h100): a job uses one GPU model"},
		{"GPUs per node", func(s *api.JobSpec) { s.GPUsPerTask, s.Ntasks = []api.GresRequest{{Name: "gpu", Count: 2}}, 40000 },
			"job asks for 80000 GPUs per node, more than the limit of 65536"},
	} {
		s := validSpec()
		tt.mut(&s)
		err := validate(&s, now, true)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestValidateEveryProblem: problems are all reported, in rule order,
// joined by "; "; a problem is not reported again by a rule that builds
// on it (GPU arithmetic on a refused count).
func TestValidateEveryProblem(t *testing.T) {
	s := validSpec()
	s.CPUs, s.Umask, s.OpenMode = 0, "8", "x"
	s.GPUs = []api.GresRequest{{Name: "gpu", Count: -1}}
	err := Validate(&s)
	want := `cpus must be at least 1 (got 0); gpus gpu count -1 is out of range: it must be between 0 and 65536; ` +
		`umask "8" is not an octal mode between 0000 and 0777; invalid --open-mode "x" (valid: append, truncate)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if p, ok := err.(api.Problems); !ok || len(p) != 4 {
		t.Errorf("got %T %d, want api.Problems of 4", err, len(p))
	}
}
