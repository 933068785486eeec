package ctld

import (
	"sort"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// partitions is the configured partitions with fast membership tests.
type partitions struct {
	list    []api.Partition
	byName  map[string]api.Partition
	members map[string]map[string]bool // partition -> node names (nil for ALL)
	def     string
	// features are the nodes' features from corral.conf's NodeName
	// lines, which -C/--constraint matches.
	features map[string][]string
}

func newPartitions(list []api.Partition) partitions {
	p := partitions{list: list, byName: make(map[string]api.Partition), members: make(map[string]map[string]bool)}
	for _, part := range list {
		p.byName[part.Name] = part
		if !part.AllNodes {
			set := make(map[string]bool, len(part.Nodes))
			for _, n := range part.Nodes {
				set[n] = true
			}
			p.members[part.Name] = set
		}
		if part.Default {
			p.def = part.Name
		}
	}
	return p
}

func (p partitions) contains(part, nodeName string) bool {
	if p.byName[part].AllNodes {
		return true
	}
	return p.members[part][nodeName]
}

// of lists the partitions that include nodeName, in configuration order.
func (p partitions) of(nodeName string) []string {
	var out []string
	for _, part := range p.list {
		if p.contains(part.Name, nodeName) {
			out = append(out, part.Name)
		}
	}
	return out
}

func (p partitions) names() []string {
	out := make([]string, len(p.list))
	for i, part := range p.list {
		out[i] = part.Name
	}
	return out
}

func sortNodes(nodes []*node) []*node {
	sort.Slice(nodes, func(a, b int) bool { return hostlist.Less(nodes[a].rec.Name, nodes[b].rec.Name) })
	return nodes
}
