package pmi

import (
	"fmt"
	"maps"
)

// Fences is the hub's side of the fences (srun's): it gathers every
// node's puts for one fence sequence after another and merges them once
// all nodes gave theirs. It is used by one goroutine.
type Fences struct {
	nodes map[string]bool // the step's nodes; false once gone
	seq   int             // the fence being gathered
	from  map[string]bool // nodes that entered it
	kvs   map[string]string
}

// NewFences gathers the fences of a step on nodes.
func NewFences(nodes []string) *Fences {
	f := &Fences{nodes: map[string]bool{}, from: map[string]bool{}, kvs: map[string]string{}}
	for _, n := range nodes {
		f.nodes[n] = true
	}
	return f
}

// Add records node's puts for fence seq. Once every node has entered the
// fence it returns all their puts (done); the next fence is seq+1. A
// fence that cannot complete, because a node of the step has ended, is
// an error, as is a node entering a fence other than the one gathered or
// the same one twice.
func (f *Fences) Add(node string, seq int, puts map[string]string) (merged map[string]string, done bool, err error) {
	alive, ok := f.nodes[node]
	switch {
	case !ok:
		return nil, false, fmt.Errorf("node %s is not in the step", node)
	case !alive:
		return nil, false, fmt.Errorf("node %s entered a fence after its tasks ended", node)
	case seq != f.seq:
		return nil, false, fmt.Errorf("node %s entered fence %d while fence %d is gathered", node, seq, f.seq)
	case f.from[node]:
		return nil, false, fmt.Errorf("node %s entered fence %d twice", node, seq)
	}
	if err := f.blocked(); err != nil {
		return nil, false, err
	}
	f.from[node] = true
	maps.Copy(f.kvs, puts)
	if len(f.from) < len(f.nodes) {
		return nil, false, nil
	}
	merged = f.kvs
	f.seq++
	f.from, f.kvs = map[string]bool{}, map[string]string{}
	return merged, true, nil
}

// Gone records that node's tasks have ended (or that srun lost it). If a
// fence is under way that it had not entered, the fence can never
// complete: that is the error.
func (f *Fences) Gone(node string) error {
	if _, ok := f.nodes[node]; !ok {
		return nil
	}
	f.nodes[node] = false
	if len(f.from) > 0 && !f.from[node] {
		return f.blocked()
	}
	return nil
}

// blocked is the error of a fence that a gone node keeps from
// completing.
func (f *Fences) blocked() error {
	for n, alive := range f.nodes {
		if !alive && !f.from[n] {
			return fmt.Errorf("fence %d cannot complete: the tasks of node %s have ended", f.seq, n)
		}
	}
	return nil
}
