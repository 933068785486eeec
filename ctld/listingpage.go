package ctld

import (
	"cmp"
	"slices"

	"github.com/corral-hpc/corral/api"
)

// statePage is what a page needs of a listing whose jobs are chosen by
// owner and state alone (no IDs, no user names): the queue's stateIndex
// lists of one uid (everyone's, for a caller who sees all) in the states
// it shows, and its array entries.
type statePage struct {
	q        *queue
	uid      uint32
	everyone bool
	state    func(api.JobState) bool // the listing shows jobs in this state
	views    func() []api.Job        // its array entries (appendArrayViews)
}

// pageIndexed is page read from the queue's stateIndex: each state's count
// is its list's length and its newest jobs the list's end, so a page costs
// O(rows shown + states + arrays) under the read lock, not a walk of every
// record. The counts and rows are those page's walk gives.
func (l *listing) pageIndexed(limit int) api.JobPage {
	sp := l.byState
	var states []statePick
	at := func(st api.JobState) *statePick {
		i := slices.IndexFunc(states, func(p statePick) bool { return p.state == st })
		if i < 0 {
			states = append(states, statePick{state: st})
			i = len(states) - 1
		}
		return &states[i]
	}
	out := api.JobPage{Jobs: []api.Job{}, Counts: map[api.JobState]int{}}
	var newest []*job
	l.mu.RLock()
	for _, st := range api.AllStates { // a job is never in another state
		k := stateKey{everyone: sp.everyone, state: st}
		if !sp.everyone {
			k.uid = sp.uid
		}
		list := sp.q.byState.lists[k]
		if list == nil || list.count() == 0 || !sp.state(st) {
			continue
		}
		p := at(st)
		newest = list.newest(newest[:0], limit)
		for _, j := range newest {
			p.add(&j.rec.Job, limit)
		}
		p.n += list.count() - len(newest)
	}
	for _, j := range sp.q.completing { // listed with the unfinished ones, as page's walk lists them
		if rec := &j.rec.Job; !sp.state(rec.State) && l.match(rec) && l.visible(rec) {
			at(rec.State).add(rec, limit)
		}
	}
	views := sp.views()
	for i := range views {
		if l.visible(&views[i]) {
			at(views[i].State).add(&views[i], limit)
		}
	}
	fillPage(&out, states, limit)
	l.mu.RUnlock()
	slices.SortFunc(out.Jobs, func(a, b api.Job) int { return cmp.Compare(b.ID, a.ID) })
	return out
}
