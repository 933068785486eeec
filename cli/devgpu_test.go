package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The GPU options reach every node daemon as corral-noded flags.
func TestDevPassesGPUFlags(t *testing.T) {
	state := filepath.Join(t.TempDir(), "st")
	d := startDev(append(MustFakeDaemons(t), "--state", state, "--nodes", "2", "--gpu-mock", "dgxa100",
		"--gpu-mock-count", "1", "--gpu-mock-mig", "0", "--fgpu-per-gpu", "2", "--mps-control", "/bin/true")...)
	defer d.cancel()
	for _, node := range []string{"dev1", "dev2"} {
		want := "--gpu-mock=dgxa100 --gpu-mock-count=1 --gpu-mock-mig=0 --fgpu-per-gpu=2 --mps-control=/bin/true --mps-dir=" + filepath.Join(state, "mps", node)
		path := filepath.Join(state, "noded", node, "gpu-args")
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, err := os.ReadFile(path)
			if err == nil {
				if string(b) != want {
					t.Fatalf("%s got %q, want %q", node, b, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never started; stderr:\n%s", node, d.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	d.cancel()
	if code := d.wait(t); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, d.stderr.String())
	}
}

func TestDevRefusesBadGPUFlags(t *testing.T) {
	fakes := MustFakeDaemons(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpu-mock", "dgx1"}, `invalid --gpu-mock "dgx1" (valid: dgxa100, dgxh100)`},
		{[]string{"--gpu-mock-count", "2"}, "--gpu-mock-count and --gpu-mock-mig need --gpu-mock"},
		{[]string{"--gpu-mock", "dgxh100", "--gpu-mock-count", "0"}, "--gpu-mock-count must be between 1 and 64 (got 0)"},
		{[]string{"--gpu-mock", "dgxh100", "--gpu-mock-mig", "x"}, `invalid --gpu-mock-mig "x"`},
		{[]string{"--fgpu-per-gpu", "0.5"}, "--fgpu-per-gpu: invalid fgpu_per_gpu \"0.5\": must be at least 1 fGPU per GPU, got 0.5"},
	} {
		state := filepath.Join(t.TempDir(), "st")
		d := startDev(append(append([]string{"--state", state}, fakes...), tc.args...)...)
		code := d.wait(t)
		if code != 2 || !strings.Contains(d.stderr.String(), tc.want) || strings.Count(d.stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, d.stderr.String(), tc.want)
		}
		if _, err := os.Stat(state); err == nil {
			t.Errorf("%q: a refused start created %s", tc.args, state)
		}
	}
}
