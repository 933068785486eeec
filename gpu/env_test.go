package gpu_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

// Seed 003 on an A100-40GB with 2 fGPU per GPU: a 0.5 fGPU job is a quarter
// of the card, 10 GiB of memory and 25% of the SMs.
func TestEnvSeed003(t *testing.T) {
	devs := devices(1)
	shares, ok := gpu.Pack(gpu.FreeOf(devs, nil, 200), gpu.Request{Amount: MustFGPU(t, "0.5"), UID: 1000}, 200)
	if !ok {
		t.Fatal("0.5 fGPU did not fit an idle A100")
	}
	env, err := gpu.EnvFor(shares, devs, 200)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CORRAL_FGPU=0.5",
		"CORRAL_GPU_MEM=10240",
		"SLURM_JOB_GPUS=0",
		"SLURM_GPUS_ON_NODE=1",
		"CUDA_VISIBLE_DEVICES=GPU-a100-0",
		"NVIDIA_VISIBLE_DEVICES=GPU-a100-0",
		"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=10240M",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
	}
	if !reflect.DeepEqual(env, want) {
		t.Fatalf("env:\n%s\nwant:\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
}

func TestEnvFor(t *testing.T) {
	devs := []gpu.Device{a100(0), a100(1), a100(2), a100MIG(3)}
	mig := a100MIG(3).MIG[1] // 2g.10gb
	for _, tc := range []struct {
		name   string
		shares []gpu.Share
		want   []string
	}{
		{"no shares", nil, nil},
		{"two whole devices, listed out of order", []gpu.Share{{Device: 2, Amount: 100}, {Device: 0, Amount: 100}}, []string{
			"CORRAL_FGPU=2", "CORRAL_GPU_MEM=81920", "SLURM_JOB_GPUS=0,2", "SLURM_GPUS_ON_NODE=2",
			"CUDA_VISIBLE_DEVICES=GPU-a100-0,GPU-a100-2", "NVIDIA_VISIBLE_DEVICES=GPU-a100-0,GPU-a100-2",
		}},
		{"whole plus a fraction: memory limit on the fraction, no thread cap", []gpu.Share{{Device: 1, Amount: 100}, {Device: 2, Amount: 50}}, []string{
			"CORRAL_FGPU=1.5", "CORRAL_GPU_MEM=61440", "SLURM_JOB_GPUS=1,2", "SLURM_GPUS_ON_NODE=2",
			"CUDA_VISIBLE_DEVICES=GPU-a100-1,GPU-a100-2", "NVIDIA_VISIBLE_DEVICES=GPU-a100-1,GPU-a100-2",
			"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=1=20480M",
		}},
		{"MIG instance", []gpu.Share{{Device: 3, Amount: 28, MIG: &mig, MIGDevice: "MIG-1234"}}, []string{
			"CORRAL_FGPU=0.28", "CORRAL_GPU_MEM=9856", "SLURM_JOB_GPUS=3", "SLURM_GPUS_ON_NODE=1",
			"CUDA_VISIBLE_DEVICES=MIG-1234", "NVIDIA_VISIBLE_DEVICES=MIG-1234",
		}},
	} {
		got, err := gpu.EnvFor(tc.shares, devs, 100)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v (err %v)\nwant %v", tc.name, got, err, tc.want)
		}
	}
}

func TestEnvForErrors(t *testing.T) {
	devs := []gpu.Device{a100(0), a100MIG(1)}
	mig := a100MIG(1).MIG[1]
	for _, tc := range []struct {
		name   string
		shares []gpu.Share
		perGPU gpu.Hundredths
		want   string
	}{
		{"unknown device", []gpu.Share{{Device: 5, Amount: 50}}, 100, "device 5 is not on this node"},
		{"device twice", []gpu.Share{{Device: 0, Amount: 50}, {Device: 0, Amount: 20}}, 100, "device 0 is assigned twice"},
		{"zero share", []gpu.Share{{Device: 0}}, 100, "outside (0, 1]"},
		{"share over the device", []gpu.Share{{Device: 0, Amount: 150}}, 100, "outside (0, 1]"},
		{"MIG share without instance", []gpu.Share{{Device: 1, Amount: 28, MIG: &mig}}, 100, "needs a MIG 2g.10gb instance"},
		{"plain share on a MIG device", []gpu.Share{{Device: 1, Amount: 100}}, 100, "MIG mode on"},
		{"MIG share on a plain device", []gpu.Share{{Device: 0, Amount: 28, MIG: &mig, MIGDevice: "MIG-x"}}, 100, "MIG mode off"},
		{"bad fgpu_per_gpu", []gpu.Share{{Device: 0, Amount: 50}}, 0, "fgpu_per_gpu must be at least 1"},
	} {
		env, err := gpu.EnvFor(tc.shares, devs, tc.perGPU)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || env != nil {
			t.Errorf("%s: env %v, err %v; want one error line about %q", tc.name, env, err, tc.want)
		}
	}
}
