package ctld

import (
	"net/http"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// notYetHonoured names the sbatch options the CLI parses but this
// controller does not act on yet. A job using one is refused at submit
// rather than run as if the option were absent: a held job must never start
// by itself, an array must never run once. Each entry goes away when the
// controller implements the option.
var notYetHonoured = []struct {
	option string
	used   func(*api.JobSpec) bool
}{
	{"--array", func(s *api.JobSpec) bool { return s.Array != nil }},
	{"--dependency", func(s *api.JobSpec) bool { return s.Dependency != nil }},
	{"--hold", func(s *api.JobSpec) bool { return s.Hold }},
	{"--begin", func(s *api.JobSpec) bool { return s.Begin != nil }},
	{"--nice", func(s *api.JobSpec) bool { return s.Nice != 0 }},
	{"--requeue", func(s *api.JobSpec) bool { return s.Requeue != nil && *s.Requeue }},
	{"--gres/--gpus", func(s *api.JobSpec) bool {
		return len(s.Gres)+len(s.GPUs)+len(s.GPUsPerNode)+len(s.GPUsPerTask) > 0
	}},
	{"--container-image", func(s *api.JobSpec) bool { return s.ContainerImage != "" }},
	{"--mount", func(s *api.JobSpec) bool { return len(s.Mounts) > 0 }},
	{"--exclusive", func(s *api.JobSpec) bool { return s.Exclusive != "" }},
	{"--constraint", func(s *api.JobSpec) bool { return s.Constraint != "" }},
	{"--qos", func(s *api.JobSpec) bool { return s.QOS != "" }},
	{"--signal", func(s *api.JobSpec) bool { return s.Signal != nil }},
	{"--export", func(s *api.JobSpec) bool { return s.Export != nil && s.Export.Mode != api.ExportAll }},
	{"--open-mode=append", func(s *api.JobSpec) bool { return s.OpenMode == "append" }},
	{"--input", func(s *api.JobSpec) bool { return s.Input != "" }},
}

// refuseNotYetHonoured returns one clear error naming every such option
// the spec uses.
func refuseNotYetHonoured(spec *api.JobSpec) error {
	var used []string
	for _, o := range notYetHonoured {
		if o.used(spec) {
			used = append(used, o.option)
		}
	}
	if len(used) == 0 {
		return nil
	}
	return errorf(http.StatusBadRequest, "this controller does not support %s yet; nothing was submitted", strings.Join(used, ", "))
}
