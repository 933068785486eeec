package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/noded"
)

// parseGPUFlags runs the GPU flags alone through urfave/cli.
func parseGPUFlags(t *testing.T, args ...string) (noded.Config, error) {
	t.Helper()
	var cfg noded.Config
	var applyErr error
	app := &cli.App{Name: "corral-noded", Flags: gpuFlags(), Action: func(c *cli.Context) error {
		applyErr = applyGPUFlags(c, &cfg)
		return nil
	}}
	if err := app.Run(append([]string{"corral-noded"}, args...)); err != nil {
		return cfg, err
	}
	return cfg, applyErr
}

func TestGPUFlags(t *testing.T) {
	cfg, err := parseGPUFlags(t, "--gpu-mock", "dgxa100", "--gpu-mock-count", "2", "--gpu-mock-mig", "0, 1",
		"--fgpu-per-gpu", "2.5", "--mps-control", "/x/mps", "--cdi-spec-dir", "/a", "--cdi-spec-dir", "/b")
	if err != nil {
		t.Fatal(err)
	}
	want := noded.Config{GPUMock: "dgxa100", GPUMockCount: 2, GPUMockMIG: []int{0, 1}, FGPUPerGPU: 250,
		MPSControl: "/x/mps", CDISpecDirs: []string{"/a", "/b"}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("config %+v, want %+v", cfg, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fgpu-per-gpu", "0.5"}, "--fgpu-per-gpu: invalid fgpu_per_gpu \"0.5\": must be at least 1 fGPU per GPU"},
		{[]string{"--fgpu-per-gpu", "two"}, "not a number"},
		{[]string{"--gpu-mock-mig", "a"}, "--gpu-mock-mig \"a\": give device indices"},
		{[]string{"--gpu-mock-count", "0"}, "--gpu-mock-count 0 must be at least 1"},
	} {
		_, err := parseGPUFlags(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line with %q", tc.args, err, tc.want)
		}
	}
}
