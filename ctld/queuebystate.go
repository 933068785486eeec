package ctld

import (
	"cmp"
	"slices"

	"github.com/corral-hpc/corral/api"
)

// stateIndex keeps the queue's jobs with a record of their own in lists
// by (owner uid, state) and by state for everyone, each in ID order, so
// that a page of the newest N jobs of each state (the dashboard's tabs)
// reads the ends of a few lists and their lengths instead of walking
// every record: a render costs O(rows shown), not O(queue). Derived: the
// queue's track path keeps it, and it is rebuilt as the queue is loaded.
type stateIndex struct {
	lists map[stateKey]*idList
}

// stateKey names one list: one uid's jobs in a state, or (everyone)
// every uid's.
type stateKey struct {
	uid      uint32
	everyone bool
	state    api.JobState
}

// idList is one list of a stateIndex, in ID order. A job that leaves it
// stays listed, stale, until enough have left that compacting pays (as
// pendingOrder does); an entry is live while its job names this list.
type idList struct {
	everyone bool
	jobs     []*job
	stale    int
}

// stateMarks is which lists of the stateIndex a job is live in.
type stateMarks struct{ own, all *idList }

func (l *idList) live(j *job) bool {
	if l.everyone {
		return j.listed.all == l
	}
	return j.listed.own == l
}

// count is how many jobs the list holds.
func (l *idList) count() int { return len(l.jobs) - l.stale }

// newest appends to out the list's n jobs of highest ID, highest first.
func (l *idList) newest(out []*job, n int) []*job {
	for i := len(l.jobs) - 1; i >= 0 && n > 0; i-- {
		if j := l.jobs[i]; l.live(j) {
			out = append(out, j)
			n--
		}
	}
	return out
}

// enter lists j, which names l already: a stale entry of its ID (it left
// and came back, or a record replaced) is reused.
func (l *idList) enter(j *job) {
	id := j.rec.Job.ID
	if n := len(l.jobs); n == 0 || l.jobs[n-1].rec.Job.ID < id {
		l.jobs = append(l.jobs, j)
		return
	}
	i, found := slices.BinarySearchFunc(l.jobs, id, func(e *job, id uint64) int { return cmp.Compare(e.rec.Job.ID, id) })
	if !found {
		l.jobs = slices.Insert(l.jobs, i, j)
		return
	}
	if old := l.jobs[i]; old == j || !l.live(old) {
		l.stale-- // j's own entry, or a replaced job's, was stale: it is j's now
	}
	l.jobs[i] = j
}

// left notes that a job no longer names l.
func (l *idList) left() {
	if l.stale++; l.stale > 64 && 2*l.stale > len(l.jobs) {
		l.jobs = slices.DeleteFunc(l.jobs, func(j *job) bool { return !l.live(j) })
		clear(l.jobs[len(l.jobs):cap(l.jobs)]) // let ended jobs go
		l.stale = 0
	}
}

func (x *stateIndex) list(k stateKey) *idList {
	l := x.lists[k]
	if l == nil {
		if x.lists == nil {
			x.lists = make(map[stateKey]*idList)
		}
		l = &idList{everyone: k.everyone}
		x.lists[k] = l
	}
	return l
}

// note files j, whose record is installed, by its owner and state now.
func (x *stateIndex) note(j *job) {
	st, uid := j.rec.Job.State, j.rec.Job.UID
	moveTo(&j.listed.own, x.list(stateKey{uid: uid, state: st}), j)
	moveTo(&j.listed.all, x.list(stateKey{everyone: true, state: st}), j)
}

// moveTo files j in list to, through slot (its owner's or everyone's
// mark), leaving the list it was in there.
func moveTo(slot **idList, to *idList, j *job) {
	if *slot == to {
		return
	}
	if old := *slot; old != nil {
		*slot = nil // no longer live there when old counts what left
		old.left()
	}
	*slot = to
	to.enter(j)
}

// forget takes j, leaving the queue, out of its lists.
func (x *stateIndex) forget(j *job) {
	own, all := j.listed.own, j.listed.all
	j.listed = stateMarks{}
	if own != nil {
		own.left()
	}
	if all != nil {
		all.left()
	}
}
