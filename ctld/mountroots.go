package ctld

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// checkMountRoots refuses at submit a job whose --mount sources no known
// node of its partition allows (each node registers its --mount-root
// directories). Such a job could only be refused at launch. With no known
// node yet anything is accepted, as for sizes (fitsSomewhere): the node
// still checks every mount as the user, and a refusal there fails the job.
func checkMountRoots(a *admission, spec *api.JobSpec) error {
	known := a.known
	if len(spec.Mounts) == 0 || len(known) == 0 {
		return nil
	}
	var roots []string
	for _, n := range known {
		if allowsMounts(n.rec.MountRoots, spec.Mounts) {
			return nil
		}
		roots = append(roots, n.rec.MountRoots...)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	allowed := "none: its nodes allow no --mount"
	if len(roots) > 0 {
		allowed = "sources must lie under " + strings.Join(roots, ", ")
	}
	what := "the job's --mount sources together"
	for _, m := range spec.Mounts {
		if !slices.ContainsFunc(known, func(n *node) bool { return allowsMounts(n.rec.MountRoots, []api.Mount{m}) }) {
			what = "--mount " + m.Source
			break
		}
	}
	return invalid("no node of partition %s allows %s (%s)", spec.Partition, what, allowed)
}

// allowsMounts: every source lies under one of roots, the node's own
// lexical test before it checks access as the user (shim.MountBinds).
func allowsMounts(roots []string, mounts []api.Mount) bool {
	for _, m := range mounts {
		src := filepath.Clean(m.Source)
		if !slices.ContainsFunc(roots, func(r string) bool {
			r = filepath.Clean(r)
			return src == r || strings.HasPrefix(src, r+"/")
		}) {
			return false
		}
	}
	return true
}
