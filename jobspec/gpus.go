package jobspec

import (
	"fmt"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// applyFGPU reads corral's --fgpu: a fraction of a GPU per node, in
// decimal fGPU (0.5, 1, 2.25), stored in hundredths.
func applyFGPU(r *Request, v string) error {
	h, err := gpu.ParseFGPU(v)
	if err != nil {
		return fmt.Errorf("--fgpu: %v", err)
	}
	r.Spec.FGPUHundredths = int(h)
	return nil
}

// checkFGPU refuses --fgpu next to a whole-GPU option: a job asks for a
// fraction or for whole devices, not both.
func checkFGPU(s *api.JobSpec) error {
	if s.FGPUHundredths == 0 {
		return nil
	}
	var whole []string
	for _, o := range []struct {
		name string
		list []api.GresRequest
	}{{"--gpus", s.GPUs}, {"--gpus-per-node", s.GPUsPerNode}, {"--gpus-per-task", s.GPUsPerTask}, {"--gres=gpu", s.Gres}} {
		if gpuCount(o.list) > 0 {
			whole = append(whole, o.name)
		}
	}
	if len(whole) > 0 {
		return fmt.Errorf("--fgpu and %s are mutually exclusive: ask for a fraction of a GPU or for whole GPUs", strings.Join(whole, ", "))
	}
	return nil
}

// PerNodeGPUs is the number of whole GPUs a resolved spec asks for on
// each of its nodes, by the rule in the package documentation, and the
// GPU type they must be ("" any). A job naming two different types gets
// an error: corral places one model per job.
func PerNodeGPUs(s *api.JobSpec) (int64, string, error) {
	nodes := max(s.Nodes, 1)
	tasksPerNode := 1
	switch {
	case s.Ntasks > 0:
		tasksPerNode = ceilDiv(s.Ntasks, nodes)
	case s.NtasksPerNode > 0:
		tasksPerNode = s.NtasksPerNode
	}
	var list []api.GresRequest
	var n int64
	switch {
	case len(s.GPUsPerNode) > 0:
		list = s.GPUsPerNode
		n = gpuCount(list)
	case gpuCount(s.Gres) > 0:
		list = s.Gres
		n = gpuCount(list)
	case len(s.GPUsPerTask) > 0:
		list = s.GPUsPerTask
		n = gpuCount(list) * int64(tasksPerNode)
	case len(s.GPUs) > 0:
		list = s.GPUs
		n = (gpuCount(list) + int64(nodes) - 1) / int64(nodes)
	}
	typ, seen := "", false
	for _, g := range list {
		if g.Name != "gpu" || g.Count == 0 {
			continue
		}
		if seen && !strings.EqualFold(typ, g.Type) {
			return 0, "", fmt.Errorf("GPUs of more than one type (%s and %s): a job uses one GPU model", typeName(typ), typeName(g.Type))
		}
		typ, seen = g.Type, true
	}
	return n, typ, nil
}

func typeName(t string) string {
	if t == "" {
		return "any type"
	}
	return t
}
