package ctld

import (
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// notYetHonoured names the sbatch options the CLI parses but this
// controller does not act on yet. A job using one is refused at submit
// rather than run as if the option were absent. Each entry goes away when
// the controller implements the option (the pipeline options, the GPU options,
// --constraint and --exclusive did).
var notYetHonoured = []struct {
	option string
	used   func(*api.JobSpec) bool
}{
	{"--qos", func(s *api.JobSpec) bool { return s.QOS != "" }},
}

// refuseNotYetHonoured returns one clear error naming every such option
// the spec uses.
func refuseNotYetHonoured(_ *admission, spec *api.JobSpec) error {
	var used []string
	for _, o := range notYetHonoured {
		if o.used(spec) {
			used = append(used, o.option)
		}
	}
	if len(used) == 0 {
		return nil
	}
	return fault.Errorf(fault.Invalid, "this controller does not support %s yet; nothing was submitted", strings.Join(used, ", "))
}
