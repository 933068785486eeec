//go:build !slurmonly

package cli

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/gpu"
)

// gpuMockKinds are the mocks corral-noded offers (package gpu/discover,
// which needs cgo and so is not linked into this command; noded checks
// again).
var gpuMockKinds = []string{"dgxa100", "dgxh100"}

// devGPUFlags are `corral dev`'s GPU options, passed to every noded.
func devGPUFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "gpu-mock", Usage: "give each node mocked GPUs: " + strings.Join(gpuMockKinds, " (A100 40GB) or ") + " (H100 80GB)"},
		&ucli.IntFlag{Name: "gpu-mock-count", Usage: "mocked GPUs per node (default 8)"},
		&ucli.StringFlag{Name: "gpu-mock-mig", Usage: "mocked GPUs in MIG mode, by index (comma list, e.g. 0,1)"},
		&ucli.StringFlag{Name: "fgpu-per-gpu", Usage: "fGPU one GPU is worth, e.g. 2 (default 1)"},
		&ucli.StringFlag{Name: "mps-control", Usage: "MPS control program for the nodes (default nvidia-cuda-mps-control on PATH)", TakesFile: true},
	}
}

// devGPUArgs checks the GPU options and returns them as noded flags.
func devGPUArgs(c *ucli.Context) ([]string, error) {
	var args []string
	mock := c.String("gpu-mock")
	if mock != "" {
		if !slices.Contains(gpuMockKinds, mock) {
			return nil, usageErrorf("invalid --gpu-mock %q (valid: %s)", mock, strings.Join(gpuMockKinds, ", "))
		}
		args = append(args, "--gpu-mock", mock)
	}
	if c.IsSet("gpu-mock-count") || c.IsSet("gpu-mock-mig") {
		if mock == "" {
			return nil, usageErrorf("--gpu-mock-count and --gpu-mock-mig need --gpu-mock")
		}
	}
	if c.IsSet("gpu-mock-count") {
		n := c.Int("gpu-mock-count")
		if n < 1 || n > 64 {
			return nil, usageErrorf("--gpu-mock-count must be between 1 and 64 (got %d)", n)
		}
		args = append(args, "--gpu-mock-count", strconv.Itoa(n))
	}
	if s := c.String("gpu-mock-mig"); s != "" {
		for _, f := range strings.Split(s, ",") {
			if i, err := strconv.Atoi(strings.TrimSpace(f)); err != nil || i < 0 {
				return nil, usageErrorf("invalid --gpu-mock-mig %q: give device indices such as 0,1", s)
			}
		}
		args = append(args, "--gpu-mock-mig", s)
	}
	if s := c.String("fgpu-per-gpu"); s != "" {
		if _, err := gpu.ParsePerGPU(s); err != nil {
			return nil, usageErrorf("--fgpu-per-gpu: %v", err)
		}
		args = append(args, "--fgpu-per-gpu", s)
	}
	if s := c.String("mps-control"); s != "" {
		abs, err := filepath.Abs(s) // the daemons run elsewhere
		if err != nil {
			return nil, err
		}
		args = append(args, "--mps-control", abs)
	}
	return args, nil
}

// nodeGPUArgs are one node's GPU flags: the options, and with them an MPS
// directory of its own inside the cluster's state (where a stopped
// cluster leaves nothing behind in /run).
func (d *devCluster) nodeGPUArgs(name string) []string {
	if len(d.gpuArgs) == 0 {
		return nil
	}
	return append(slices.Clone(d.gpuArgs), "--mps-dir", filepath.Join(d.state, "mps", name))
}
