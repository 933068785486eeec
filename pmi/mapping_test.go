package pmi

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestProcessMapping(t *testing.T) {
	cases := []struct {
		nodeOf []int
		want   string
	}{
		{[]int{0, 0, 1, 1}, "(vector,(0,2,2))"},    // block, 2 per node
		{[]int{0, 1, 0, 1}, "(vector,(0,2,1))"},    // cyclic
		{[]int{0, 1, 2, 0, 1}, "(vector,(0,3,1))"}, // cyclic, the last round short
		{[]int{0, 0, 0, 1, 1}, "(vector,(0,1,3),(1,1,2))"},
		{[]int{0}, "(vector,(0,1,1))"},
		{[]int{0, 0, 1}, "(vector,(0,1,2),(1,1,1))"},
		{[]int{1, 0}, "(vector,(1,1,1),(0,1,1))"},
		{nil, ""},
	}
	for _, c := range cases {
		if got := ProcessMapping(c.nodeOf); got != c.want {
			t.Errorf("ProcessMapping(%v) = %q, want %q", c.nodeOf, got, c.want)
		}
	}
}

// TestProcessMappingReadsBack checks random placements: MPICH's reading
// of the mapping (blocks repeated until every rank is placed) gives each
// rank its node.
func TestProcessMappingReadsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		nodeOf := make([]int, 1+r.IntN(12))
		for i := range nodeOf {
			nodeOf[i] = r.IntN(4)
		}
		m := ProcessMapping(nodeOf)
		got, err := readMapping(m, len(nodeOf))
		if err != nil {
			t.Fatalf("%v: %q: %v", nodeOf, m, err)
		}
		for i := range nodeOf {
			if got[i] != nodeOf[i] {
				t.Fatalf("%v: %q reads back as %v", nodeOf, m, got)
			}
		}
	}
}

// readMapping places size ranks as MPICH reads a "vector" mapping: the
// blocks in turn, repeated until every rank has its node.
func readMapping(m string, size int) ([]int, error) {
	body, ok := strings.CutPrefix(m, "(vector,")
	if !ok || !strings.HasSuffix(body, ")") {
		return nil, fmt.Errorf("not a vector mapping")
	}
	var blocks []block
	for _, part := range strings.Split(strings.TrimSuffix(body, ")"), "),") {
		var b block
		if _, err := fmt.Sscanf(strings.TrimSuffix(part, ")"), "(%d,%d,%d", &b.start, &b.count, &b.size); err != nil {
			return nil, fmt.Errorf("block %q: %v", part, err)
		}
		if b.count < 1 || b.size < 1 {
			return nil, fmt.Errorf("block %q is empty", part)
		}
		blocks = append(blocks, b)
	}
	out := make([]int, 0, size)
	for len(out) < size {
		for _, b := range blocks {
			for node := b.start; node < b.start+b.count; node++ {
				for i := 0; i < b.size && len(out) < size; i++ {
					out = append(out, node)
				}
			}
		}
	}
	return out, nil
}
