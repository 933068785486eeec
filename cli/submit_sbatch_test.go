package cli

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// sbatch's newer options reach the controller in the spec.
func TestSubmitSendsSbatchOptions(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH --array=0-9%2 -d afterok:41 --gres=gpu:a100:2 --mem-per-cpu=1G -c 4\n" +
		"#SBATCH --export=NONE --signal=B:USR1@90 --container-image=ubuntu:24.04 --mount=/data:/data:ro\nrun\n"
	MustWorkDir(t, map[string]string{"job.sh": script})
	f := MustFakeCtld(t)
	r := f.run("submit", "--hold", "--begin=now+1hour", "--qos=high", "job.sh")
	if r.code != 0 || r.stdout != "Submitted batch job 7\n" || r.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	s := decodeSubmit(t, f.MustOneRequest(t)).Spec
	switch {
	case s.Array == nil || s.Array.Count() != 10 || s.Array.MaxRunning != 2:
		t.Errorf("array = %+v", s.Array)
	case s.Dependency == nil || len(s.Dependency.Conditions) != 1 || s.Dependency.Conditions[0].JobID != 41:
		t.Errorf("dependency = %+v", s.Dependency)
	case len(s.Gres) != 1 || s.Gres[0] != (api.GresRequest{Name: "gpu", Type: "a100", Count: 2}):
		t.Errorf("gres = %+v", s.Gres)
	case s.CPUs != 4 || s.MemPerCPU != 1<<30 || s.MemBytes != 4<<30:
		t.Errorf("cpus %d, mem per cpu %d, mem %d", s.CPUs, s.MemPerCPU, s.MemBytes)
	case s.Export == nil || s.Export.Mode != api.ExportNone || len(s.Env) == 0:
		t.Errorf("export %+v with %d variables: the environment must still be sent", s.Export, len(s.Env))
	case s.Signal == nil || *s.Signal != (api.JobSignal{Signal: 10, Before: 90, BatchOnly: true}):
		t.Errorf("signal = %+v", s.Signal)
	case s.ContainerImage != "ubuntu:24.04" || len(s.Mounts) != 1 || !s.Mounts[0].ReadOnly:
		t.Errorf("container %q, mounts %+v", s.ContainerImage, s.Mounts)
	case !s.Hold || s.Begin == nil || s.QOS != "high" || s.Output != "corral-%A_%a.out":
		t.Errorf("hold %v, begin %v, qos %q, output %q", s.Hold, s.Begin, s.QOS, s.Output)
	}
}

func TestSubmitQuiet(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": "#!/bin/sh\n#SBATCH --mail-type=END\ntrue\n"})
	for _, args := range [][]string{{"-Q", "job.sh"}, {"--quiet", "--parsable", "job.sh"}} {
		f := MustFakeCtld(t)
		r := f.run(append([]string{"submit"}, args...)...)
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want silence", args, r.code, r.stdout, r.stderr)
		}
		if n := len(f.Requests()); n != 1 {
			t.Errorf("%q: controller got %d requests, want 1", args, n)
		}
	}
}

func TestSubmitVersionAndUsage(t *testing.T) {
	r := runCLI("", "submit", "-V")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "corral ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("-V: %+v", r)
	}
	r = runCLI("", "submit", "--usage")
	if r.code != 0 || !contains(r.stdout, "usage: corral submit", "--array INDEXES", "ignored, with a warning") {
		t.Errorf("--usage: %+v", r)
	}
}
