package noded

import (
	"fmt"
	"path/filepath"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/noded/shim"
)

// jobPlacement is where job sj's cgroup is, from its launch.json: the
// job's own cgroup (cgroup.JobName), or, for a job that adopted a
// prepared spare's container (sj.Prepared), the spare's
// (cgroup.SpareName), which cgroup v2 cannot rename. It is never
// recomputed from the job's ID. A name that is not one this noded gives
// that job is refused: launch.json is noded's own file, but the cgroup
// it names decides whose processes a job's socket and app tunnel admit.
func (d *Daemon) jobPlacement(sj *shim.Job) (cgroup.Placement, error) {
	want := cgroup.JobName(d.cgScope, sj.Launch.JobID)
	if sj.Prepared != "" {
		want = cgroup.SpareName(d.cgScope, sj.Prepared)
	}
	if name := filepath.Base(sj.CgroupPath); sj.CgroupPath == "" || name != want {
		return cgroup.Placement{}, fmt.Errorf("job %d: its launch.json names the cgroup %q, not %s of this node", sj.Launch.JobID, sj.CgroupPath, want)
	}
	p, err := d.cg.Place(want)
	if err == nil && p.Path != sj.CgroupPath {
		err = fmt.Errorf("job %d: its launch.json names the cgroup %s, but this node places %s at %s", sj.Launch.JobID, sj.CgroupPath, want, p.Path)
	}
	return p, err
}
