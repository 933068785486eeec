package ctld

import (
	"strings"

	"github.com/corral-hpc/corral/api"
)

// DefaultQOS is the one quality of service corral has: Slurm's default,
// which every Slurm site defines, so that a script's --qos=normal runs
// as it did there.
const DefaultQOS = "normal"

// checkQOS refuses a --qos other than DefaultQOS, in any case, as Slurm
// refuses a QOS its database does not define ("Invalid qos
// specification"): a job asking for a QOS's priority or limits is not
// run without them.
func checkQOS(_ *admission, spec *api.JobSpec) error {
	if spec.QOS == "" || strings.EqualFold(spec.QOS, DefaultQOS) {
		return nil
	}
	return invalid("QOS %s does not exist (this cluster has one: %s); nothing was submitted", spec.QOS, DefaultQOS)
}
