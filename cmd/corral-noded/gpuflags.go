package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/gpu/discover"
	"github.com/corral-hpc/corral/noded"
)

// gpuFlags are the GPU settings (docs/gpu.md).
func gpuFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "fgpu-per-gpu", DefaultText: "the controller's default (1)", Usage: "fGPU one of this node's GPUs is worth, e.g. 2 (1 to 100, two decimals at most)"},
		&cli.StringFlag{Name: "gpu-mock", Usage: "use go-nvml's mock of a DGX instead of the real GPUs: " + strings.Join(discover.MockKinds(), " or ")},
		&cli.IntFlag{Name: "gpu-mock-count", DefaultText: strconv.Itoa(noded.DefaultGPUMockCount), Usage: "GPUs of the --gpu-mock"},
		&cli.StringFlag{Name: "gpu-mock-mig", Usage: "mock GPUs in MIG mode, by index (comma list, e.g. 0,1)"},
		&cli.StringFlag{Name: "nvml", DefaultText: "libnvidia-ml.so.1", Usage: "NVML library to read the GPUs with"},
		&cli.StringFlag{Name: "mps-control", DefaultText: "nvidia-cuda-mps-control on PATH", Usage: "MPS control program, started once per GPU that jobs share by fractions"},
		&cli.StringFlag{Name: "mps-dir", DefaultText: noded.DefaultMPSDir + "/<name>", Usage: "directory for each GPU's MPS pipe and log directories"},
		&cli.StringSliceFlag{Name: "cdi-spec-dir", DefaultText: "/etc/cdi and /var/run/cdi", Usage: "CDI spec directory (repeatable); GPUs named there are given to jobs through CDI"},
	}
}

// applyGPUFlags copies the GPU flags into cfg; bad values get one line.
func applyGPUFlags(c *cli.Context, cfg *noded.Config) error {
	if s := c.String("fgpu-per-gpu"); s != "" {
		h, err := gpu.ParsePerGPU(s)
		if err != nil {
			return fmt.Errorf("--fgpu-per-gpu: %v", err)
		}
		cfg.FGPUPerGPU = h
	}
	cfg.GPUMock, cfg.GPUMockCount = c.String("gpu-mock"), c.Int("gpu-mock-count")
	if c.IsSet("gpu-mock-count") && cfg.GPUMockCount < 1 {
		return fmt.Errorf("--gpu-mock-count %d must be at least 1", cfg.GPUMockCount)
	}
	if s := c.String("gpu-mock-mig"); s != "" {
		for _, f := range strings.Split(s, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return fmt.Errorf("--gpu-mock-mig %q: give device indices such as 0,1", s)
			}
			cfg.GPUMockMIG = append(cfg.GPUMockMIG, i)
		}
	}
	cfg.NVMLPath, cfg.MPSControl, cfg.MPSDir = c.String("nvml"), c.String("mps-control"), c.String("mps-dir")
	cfg.CDISpecDirs = c.StringSlice("cdi-spec-dir")
	return nil
}
