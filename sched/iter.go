package sched

import "sort"

// Candidate is a node on which a job can start at the time being planned.
type Candidate struct {
	Node string
	// Free is what the node has free at that time, before the job.
	Free Resources
	pos  int
}

// RankedCandidate is a candidate with a score; higher is better.
type RankedCandidate struct {
	Candidate
	Score float64
}

// FeasibleIterator yields the nodes a job can start on, one at a time, in a
// deterministic order; nil when there are no more. Filters wrap a source
// (Nomad style), so a new constraint is one more small iterator.
type FeasibleIterator interface {
	Next() *Candidate
}

// RankIterator yields feasible candidates with scores; nil when done.
type RankIterator interface {
	Next() *RankedCandidate
}

// sliceIterator is the source: candidates the timeline search found.
type sliceIterator struct {
	cands []Candidate
	i     int
}

var _ FeasibleIterator = (*sliceIterator)(nil)

func (it *sliceIterator) Next() *Candidate {
	if it.i >= len(it.cands) {
		return nil
	}
	it.i++
	return &it.cands[it.i-1]
}

// FitsFilter drops candidates whose free resources cannot hold Need.
// The timeline search already guarantees this (per-device GPU fit
// included, see gpus.go); it is kept as a cheap guard.
type FitsFilter struct {
	Source FeasibleIterator
	Need   Resources
}

var _ FeasibleIterator = (*FitsFilter)(nil)

func (f *FitsFilter) Next() *Candidate {
	for c := f.Source.Next(); c != nil; c = f.Source.Next() {
		if f.Need.Fits(c.Free) {
			return c
		}
	}
	return nil
}

// BinPackRank scores a candidate by how full the node would be after the
// job starts (mean of the CPU and memory fractions in use), so jobs pack
// tightly and large holes stay open for large jobs.
type BinPackRank struct {
	Source   FeasibleIterator
	Need     Resources
	Capacity func(pos int) Resources
}

var _ RankIterator = (*BinPackRank)(nil)

func (r *BinPackRank) Next() *RankedCandidate {
	c := r.Source.Next()
	if c == nil {
		return nil
	}
	capa := r.Capacity(c.pos)
	left := c.Free.Sub(r.Need)
	score, parts := 0.0, 0
	if capa.CPUs > 0 {
		score += 1 - float64(left.CPUs)/float64(capa.CPUs)
		parts++
	}
	if capa.MemBytes > 0 {
		score += 1 - float64(left.MemBytes)/float64(capa.MemBytes)
		parts++
	}
	if parts > 0 {
		score /= float64(parts)
	}
	return &RankedCandidate{Candidate: *c, Score: score}
}

// selectTop drains it and returns the k best candidates, highest score
// first, ties broken by node position so plans are deterministic.
func selectTop(it RankIterator, k int) []Candidate {
	var all []RankedCandidate
	for r := it.Next(); r != nil; r = it.Next() {
		all = append(all, *r)
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].Score != all[b].Score {
			return all[a].Score > all[b].Score
		}
		return all[a].pos < all[b].pos
	})
	if len(all) > k {
		all = all[:k]
	}
	out := make([]Candidate, len(all))
	for i := range all {
		out[i] = all[i].Candidate
	}
	return out
}
