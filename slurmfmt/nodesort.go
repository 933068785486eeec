package slurmfmt

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// SortNodeGroups orders sinfo's lines by an -S spec ("+P,-m": sinfo -o
// letters, each optionally after + or -, descending with -; "#P" keeps
// the partitions' configured order). As Slurm's sinfo, it sorts stably
// by each key from the last to the first, so the first key decides
// first, and skips letters it has no order for.
func SortNodeGroups(groups []NodeGroup, spec string, e *Env) {
	items := strings.Split(spec, ",")
	for i := len(items) - 1; i >= 0; i-- {
		item := strings.TrimSpace(items[i])
		desc := false
		switch {
		case strings.HasPrefix(item, "#"):
			continue // the configured order is the order groups come in
		case strings.HasPrefix(item, "-"):
			desc, item = true, item[1:]
		case strings.HasPrefix(item, "+"):
			item = item[1:]
		}
		by := nodeSortKey(item, e)
		if by == nil {
			continue
		}
		slices.SortStableFunc(groups, func(a, b NodeGroup) int {
			if desc {
				return by(&b, &a)
			}
			return by(&a, &b)
		})
	}
}

// nodeSortKey compares two lines by one letter: node state by Slurm's
// numbering, node lists by host order, numbers as numbers, the rest as
// printed. nil for a letter sinfo does not know.
func nodeSortKey(letter string, e *Env) func(a, b *NodeGroup) int {
	switch letter {
	case "t", "T":
		return func(a, b *NodeGroup) int { return cmp.Compare(groupStateRank(a), groupStateRank(b)) }
	case "N", "n", "o":
		return func(a, b *NodeGroup) int { return hostOrder(firstName(a), firstName(b)) }
	case "P", "R":
		return func(a, b *NodeGroup) int { return strings.Compare(a.Part.Name, b.Part.Name) }
	}
	f, ok := nodeFields[letter]
	if !ok {
		return nil
	}
	return func(a, b *NodeGroup) int {
		x, y := f.value(a, e), f.value(b, e)
		m, errM := strconv.ParseInt(x, 10, 64)
		n, errN := strconv.ParseInt(y, 10, 64)
		if errM == nil && errN == nil {
			return cmp.Compare(m, n)
		}
		return strings.Compare(x, y)
	}
}

func firstName(g *NodeGroup) string {
	if len(g.Nodes) == 0 {
		return ""
	}
	return g.Nodes[0].Name
}

// groupStateRank is a line's node state as Slurm numbers it: the base
// state (down 1, idle 2, allocated 3, mixed 5) with its flags above
// (drain 0x200, completing 0x400, not responding 0x800), so that sorting
// by state puts flagged nodes after every plain one, as sinfo does.
func groupStateRank(g *NodeGroup) int {
	if len(g.Nodes) == 0 {
		return 0
	}
	n := g.Nodes[0]
	base, flags := 0, 0
	switch n.State {
	case api.NodeDown:
		base = 1
		if notResponding(n) {
			flags |= 0x800
		}
	case api.NodeIdle:
		base = 2
	case api.NodeAllocated:
		base = 3
	case api.NodeMixed:
		base = 5
	case api.NodeCompleting:
		base, flags = 2, 0x400
	case api.NodeDrained:
		base, flags = 2, 0x200
	case api.NodeDraining:
		base, flags = 5, 0x200
		if fullyAllocated(n) {
			base = 3
		}
	}
	if n.Completing {
		flags |= 0x400
	}
	return base | flags
}
