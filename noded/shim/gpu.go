package shim

import (
	"strings"

	"github.com/corral-hpc/corral/container"
)

// GPUSetup is what noded prepared for a job's GPUs: the environment that
// tells the job what it got (CORRAL_FGPU, CUDA_VISIBLE_DEVICES, the MPS
// limits...), the device nodes it may use (and nothing else of the
// host's GPUs) and extra binds (its MPS pipe directory, CDI mounts).
type GPUSetup struct {
	Env     []string           `json:"env"` // KEY=VALUE; overrides the submitter's
	Devices []container.Device `json:"devices,omitempty"`
	Binds   []container.Bind   `json:"binds,omitempty"`
}

// gpuVars are the GPU variables as (key, value) pairs, in order.
func gpuVars(j *Job) [][2]string {
	if j.GPU == nil {
		return nil
	}
	var out [][2]string
	for _, kv := range j.GPU.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// gpuDevices and gpuBinds are the job's GPU devices and binds, if any.
func gpuDevices(j *Job) []container.Device {
	if j.GPU == nil {
		return nil
	}
	return j.GPU.Devices
}

func gpuBinds(j *Job) []container.Bind {
	if j.GPU == nil {
		return nil
	}
	return j.GPU.Binds
}
