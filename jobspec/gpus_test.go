package jobspec

import (
	"strings"
	"testing"
)

func TestFGPUOption(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--fgpu", "0.5"}, 50},
		{[]string{"--fgpu=2.25"}, 225},
		{[]string{"--fgpu", ".75"}, 75},
		{[]string{"--fgpu", "3"}, 300},
	} {
		if got := MustParseArgs(t, tc.args...).Spec.FGPUHundredths; got != tc.want {
			t.Errorf("%q: %d hundredths, want %d", tc.args, got, tc.want)
		}
	}
	// In a script, as a directive, too.
	r, err := ParseAt([]string{"job.sh"}, newScripts("job.sh", "#!/bin/sh\n#SBATCH --fgpu=0.25\necho\n").read, testNow)
	if err != nil || r.Spec.FGPUHundredths != 25 {
		t.Fatalf("directive: %v %+v", err, r)
	}
}

func TestFGPUErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fgpu", "0"}, "must be more than 0"},
		{[]string{"--fgpu", "0.125"}, "more than 2 decimal places"},
		{[]string{"--fgpu", "-1"}, "negative"},
		{[]string{"--fgpu", "half"}, "not a number"},
		{[]string{"--fgpu", "0.5", "--gpus", "1"}, "--fgpu and --gpus are mutually exclusive"},
		{[]string{"--fgpu", "0.5", "--gres", "gpu:a100:1"}, "--fgpu and --gres=gpu are mutually exclusive"},
		{[]string{"--fgpu", "0.5", "--gpus-per-node", "1", "--gpus-per-task", "1"}, "--gpus-per-node, --gpus-per-task"},
	} {
		_, err := ParseAt(append(tc.args, "job.sh"), newScripts("job.sh", plain).read, testNow)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line with %q", tc.args, err, tc.want)
		}
	}
	// A GRES that is not a GPU does not conflict.
	if r := MustParseArgs(t, "--fgpu", "0.5", "--gres", "nic:1"); r.Spec.FGPUHundredths != 50 {
		t.Errorf("--fgpu with --gres=nic: %+v", r.Spec)
	}
}

func TestPerNodeGPUs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		n       int64
		typ     string
		wantErr string
	}{
		{nil, 0, "", ""},
		{[]string{"--fgpu", "0.5"}, 0, "", ""},
		{[]string{"--gpus", "2"}, 2, "", ""},
		{[]string{"--gpus", "a100:3", "-N", "2"}, 2, "a100", ""},
		{[]string{"--gres", "gpu:h100:4"}, 4, "h100", ""},
		{[]string{"--gpus-per-node", "2", "-N", "3"}, 2, "", ""},
		{[]string{"--gpus-per-task", "1", "-n", "4"}, 4, "", ""},
		{[]string{"--gpus-per-task", "1", "-n", "4", "-N", "2"}, 2, "", ""},
		{[]string{"--gres", "gpu:a100:1,gpu:h100:1"}, 0, "", "more than one type (a100 and h100)"},
		{[]string{"--gpus", "1,a100:1"}, 0, "", "more than one type (any type and a100)"},
	} {
		r := MustParseArgs(t, tc.args...)
		n, typ, err := PerNodeGPUs(&r.Spec)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || n != tc.n || typ != tc.typ {
			t.Errorf("%q: %d %q %v; want %d %q", tc.args, n, typ, err, tc.n, tc.typ)
		}
	}
}
