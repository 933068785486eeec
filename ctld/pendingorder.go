package ctld

import (
	"cmp"
	"slices"
)

// pendingOrder keeps the queue's pending jobs in ID (submit) order, so
// that a cycle walks them without iterating a map or sorting: a new job
// takes the next ID and is appended; one that comes back to PENDING (a
// requeue, an array task's first change) goes back to its place. A job
// that leaves PENDING stays in the list, marked stale, until enough have
// left that compacting pays.
type pendingOrder struct {
	jobs  []*job
	stale int
}

// pendingMark is where a job stands in the queue's pendingOrder.
type pendingMark uint8

const (
	notInOrder   pendingMark = iota
	inOrder                  // listed, and pending
	staleInOrder             // listed, no longer pending
)

// pending notes that j, whose record is installed, is pending.
func (p *pendingOrder) pending(j *job) {
	switch j.order {
	case inOrder:
		return
	case staleInOrder:
		p.stale--
	case notInOrder:
		id := j.rec.Job.ID
		if n := len(p.jobs); n == 0 || p.jobs[n-1].rec.Job.ID < id {
			p.jobs = append(p.jobs, j)
		} else {
			i, _ := slices.BinarySearchFunc(p.jobs, id, func(e *job, id uint64) int { return cmp.Compare(e.rec.Job.ID, id) })
			p.jobs = slices.Insert(p.jobs, i, j)
		}
	}
	j.order = inOrder
}

// left notes that j is no longer pending.
func (p *pendingOrder) left(j *job) {
	if j.order != inOrder {
		return
	}
	j.order = staleInOrder
	if p.stale++; p.stale > 64 && 2*p.stale > len(p.jobs) {
		p.compact()
	}
}

// compact drops the stale entries.
func (p *pendingOrder) compact() {
	p.jobs = slices.DeleteFunc(p.jobs, func(j *job) bool {
		if j.order == staleInOrder {
			j.order = notInOrder
			return true
		}
		return false
	})
	clear(p.jobs[len(p.jobs):cap(p.jobs)]) // let ended jobs go
	p.stale = 0
}

// each yields the pending jobs in ID order.
func (p *pendingOrder) each(yield func(*job) bool) {
	for _, j := range p.jobs {
		if j.order == inOrder && !yield(j) {
			return
		}
	}
}
