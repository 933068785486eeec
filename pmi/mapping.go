package pmi

import (
	"fmt"
	"strings"
)

// ProcessMapping is PMI_process_mapping for ranks placed as nodeOf says
// (nodeOf[rank] is the rank's node index): MPICH's "vector" form, blocks
// (first node, node count, ranks per node), each block giving that many
// consecutive ranks to each of its nodes in turn. A block list that
// repeats is written once, as MPICH repeats it until every rank is
// placed: block placement of 4 ranks on 2 nodes is (vector,(0,2,2)),
// cyclic (vector,(0,2,1)). "" for no ranks.
func ProcessMapping(nodeOf []int) string {
	if len(nodeOf) == 0 {
		return ""
	}
	// Runs of consecutive ranks on one node.
	type run struct{ node, n int }
	var runs []run
	for _, node := range nodeOf {
		if k := len(runs); k > 0 && runs[k-1].node == node {
			runs[k-1].n++
			continue
		}
		runs = append(runs, run{node, 1})
	}
	// Blocks: runs of equal length on consecutive nodes.
	var blocks []block
	for _, r := range runs {
		if k := len(blocks); k > 0 {
			b := &blocks[k-1]
			if b.size == r.n && b.start+b.count == r.node {
				b.count++
				continue
			}
		}
		blocks = append(blocks, block{r.node, 1, r.n})
	}
	// The shortest prefix of blocks that MPICH's repetition turns into
	// the same placement.
	period := len(blocks)
	for p := 1; p < len(blocks); p++ {
		if placesAs(blocks[:p], nodeOf) {
			period = p
			break
		}
	}
	var b strings.Builder
	b.WriteString("(vector")
	for _, bl := range blocks[:period] {
		fmt.Fprintf(&b, ",(%d,%d,%d)", bl.start, bl.count, bl.size)
	}
	b.WriteString(")")
	return b.String()
}

type block struct{ start, count, size int }

// placesAs says whether repeating blocks, as MPICH reads a mapping,
// places the ranks as nodeOf does.
func placesAs(blocks []block, nodeOf []int) bool {
	rank := 0
	for {
		for _, b := range blocks {
			for node := b.start; node < b.start+b.count; node++ {
				for i := 0; i < b.size; i++ {
					if rank == len(nodeOf) {
						return true
					}
					if nodeOf[rank] != node {
						return false
					}
					rank++
				}
			}
		}
	}
}
