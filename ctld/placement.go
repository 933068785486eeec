package ctld

import (
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
)

// Placement options limit the nodes a job may use: -w (exactly these),
// -x (never these), -C (those whose features, from corral.conf's
// NodeName lines, match). Admission holds them to the partition's nodes, so a
// job no node could take is refused at submit; each snapshot resolves
// them into the planner's allowed set (sched.Pending.Allowed), so the
// cycle, --test-only and the simulator place alike.

// setPlacement checks -w and -x against the partition and narrows the
// nodes later validators judge fit on to those the job may use. -w raises
// the node count to the list's length, as Slurm does; a job asking for
// more nodes than -w names is refused, since corral places a -w job on
// exactly those. With no node registered yet and a partition of ALL
// nodes, names cannot be judged: the job is accepted, as for fit.
func setPlacement(a *admission, spec *api.JobSpec) error {
	if a.part.Name == "" || !placed(spec) {
		return nil
	}
	c, err := jobspec.ParseConstraint(spec.Constraint)
	if spec.Constraint != "" && err != nil {
		return nil // the spec check said why
	}
	if c.Brackets && spec.Nodes > 1 {
		return invalid("--constraint %s: [...] on a job of %d nodes is not supported (corral matches features node by node)", spec.Constraint, spec.Nodes)
	}
	var members []string // the partition's nodes, as far as known
	if a.part.AllNodes {
		for _, n := range a.known {
			members = append(members, n.rec.Name)
		}
	} else {
		members = a.part.Nodes
	}
	if len(spec.NodeList) > 0 {
		if spec.Nodes > len(spec.NodeList) {
			return invalid("--nodes=%d is more than the %d node(s) of --nodelist %s: corral runs a --nodelist job on exactly the listed nodes",
				spec.Nodes, len(spec.NodeList), hostlist.Compress(spec.NodeList))
		}
		spec.Nodes = len(spec.NodeList)
		if len(members) > 0 {
			var unknown []string
			for _, name := range spec.NodeList {
				if !slices.Contains(members, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) > 0 {
				return invalid("--nodelist: %s not in partition %s (its nodes: %s)",
					nodesAre(unknown), a.part.Name, hostlist.Compress(sortedCopy(members)))
			}
		}
	}
	allowed := allowedNodes(spec, members, a.s.parts.features)
	if len(members) > 0 && len(allowed) < spec.Nodes {
		return invalid("job asks for %d node(s) but %d of partition %s's nodes (%s) pass %s: it could never run",
			spec.Nodes, len(allowed), a.part.Name, hostlist.Compress(sortedCopy(members)), placementOptions(spec))
	}
	a.known = slices.DeleteFunc(slices.Clone(a.known), func(n *node) bool { return !allowed[n.rec.Name] })
	return nil
}

// placed says whether the job limits its nodes at all.
func placed(spec *api.JobSpec) bool {
	return len(spec.NodeList) > 0 || len(spec.Exclude) > 0 || spec.Constraint != ""
}

// placementOptions names the options a job limits its nodes with.
func placementOptions(spec *api.JobSpec) string {
	var used []string
	for _, o := range []struct {
		name string
		used bool
	}{{"--nodelist", len(spec.NodeList) > 0}, {"--exclude", len(spec.Exclude) > 0}, {"--constraint " + spec.Constraint, spec.Constraint != ""}} {
		if o.used {
			used = append(used, o.name)
		}
	}
	return strings.Join(used, " and ")
}

// allowedNodes is the set of names (out of all) the job may run on, nil
// when it limits its nodes in no way; features are the nodes' features.
// A constraint that does not parse allows no node: admission refuses it.
func allowedNodes(spec *api.JobSpec, all []string, features map[string][]string) map[string]bool {
	if !placed(spec) {
		return nil
	}
	allowed := make(map[string]bool)
	if len(spec.NodeList) > 0 {
		for _, n := range spec.NodeList {
			allowed[n] = true
		}
	} else {
		for _, n := range all {
			allowed[n] = true
		}
	}
	for _, n := range spec.Exclude {
		delete(allowed, n)
	}
	if spec.Constraint != "" {
		c, err := jobspec.ParseConstraint(spec.Constraint)
		for n := range allowed {
			if err != nil || !c.Matches(features[n]) {
				delete(allowed, n)
			}
		}
	}
	return allowed
}

// nodesAre is "node X is" or "nodes X,Y are".
func nodesAre(names []string) string {
	if len(names) == 1 {
		return "node " + names[0] + " is"
	}
	return "nodes " + strings.Join(names, ",") + " are"
}

func sortedCopy(names []string) []string {
	out := slices.Clone(names)
	hostlist.Sort(out)
	return out
}
