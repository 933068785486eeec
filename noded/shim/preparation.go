package shim

import (
	"slices"

	"github.com/corral-hpc/corral/api"
)

// Preparation is what a spare shim prepares a container for before any
// job: noded writes it, as one JSON line, on the spare's job pipe
// (JobFD) right after starting it; the job directory follows later on
// its own line. The container is an extern job's (corral-init holding,
// tasks to come as spawn requests) for the identity below: everything
// such a container holds that a later job cannot change (the user
// corral-init runs as, the host view, the hidden paths, corral-init
// itself) is fixed here, and the rest (limits, /tmp and /dev/shm sizes,
// the job's binds, its name) is set when a job adopts it (prepared.go).
type Preparation struct {
	// Token is random hex: the container is "spare"+Token in RuncRoot
	// (SpareContainerID), its cgroup cgroup.SpareName(node, Token).
	Token string `json:"token"`
	// Dir is <state>/spares/<token>: the container's rootfs/ and owner,
	// the shim's pidLine, by which noded tells a live spare from a dead one.
	Dir        string   `json:"dir"`
	RuncRoot   string   `json:"runc_root"`
	CgroupPath string   `json:"cgroup_path"` // the placement's Path
	InitPath   string   `json:"init_path"`
	Hide       []string `json:"hide,omitempty"`
	MaxPids    int64    `json:"max_pids"`
	// The identity, named as in api.LaunchRequest.
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	Umask  string   `json:"umask,omitempty"`
}

// Names in a Preparation's Dir.
const (
	SparesDir = "spares"  // in noded's state directory: one Dir per prepared spare
	OwnerFile = "owner"   // the preparing shim's PID and start time
	SpareRoot = RootfsDir // the prepared container's root
)

// SpareContainerID names a prepared container in its runc root until a
// job adopts it (it is then renamed ContainerID of the job).
func SpareContainerID(token string) string { return "spare" + token }

// PreparationFor is the Preparation a spare would make for job j's
// identity (Token, Dir and CgroupPath left for noded to fill), so that
// noded can ask Fits of a job whether the next spare should be prepared
// for its user.
func PreparationFor(j *Job) *Preparation {
	l := &j.Launch
	return &Preparation{RuncRoot: j.RuncRoot, InitPath: j.InitPath, Hide: slices.Clone(j.Hide), MaxPids: j.MaxPids,
		UID: l.UID, GID: l.GID, Groups: slices.Clone(l.Groups), Umask: l.Umask}
}

// Fits says whether job j may adopt the container prepared for p: an
// extern part (corral-init holding, no script, no output files), no
// image, no GPUs (their devices and binds are fixed at creation), and
// the same uid, gid, set of groups, umask (corral-init runs as the user
// without capabilities: it can change none of them), corral-init, hidden
// paths and runc root. noded asks it before handing a job to a prepared
// spare, and the spare asks again before adopting.
func (p *Preparation) Fits(j *Job) bool {
	if p == nil || j == nil {
		return false
	}
	l := &j.Launch
	if l.Role != api.RoleExtern || l.Image != "" || j.ImageRootfs != "" || len(l.GPUs) > 0 || j.GPU != nil {
		return false
	}
	pm, perr := api.ParseUmask(p.Umask)
	jm, jerr := api.ParseUmask(l.Umask)
	return perr == nil && jerr == nil && pm == jm &&
		p.UID == l.UID && p.GID == l.GID && sameSet(p.Groups, l.Groups) &&
		p.InitPath == j.InitPath && p.RuncRoot == j.RuncRoot && slices.Equal(p.Hide, j.Hide)
}

// sameSet says whether a and b hold the same values, in any order and
// with any repeats.
func sameSet(a, b []uint32) bool {
	in := func(s []uint32, v uint32) bool { return slices.Contains(s, v) }
	for _, v := range a {
		if !in(b, v) {
			return false
		}
	}
	for _, v := range b {
		if !in(a, v) {
			return false
		}
	}
	return true
}
