package ctld

import "github.com/corral-hpc/corral/api"

// The queue's side of the accounting history: which of its jobs and
// array remainders a history names. The records are made from them by
// the history's own views, as they are sent.

// history lists what f names and caller may see: pointers only, some 24
// bytes a job, so a history of 100,000 jobs is planned without copying
// any of it. The caller holds Server.mu (read is enough).
func (q *queue) history(f *api.AcctFilter, caller peer) []acctItem {
	var items []acctItem
	addJob := func(j *job) {
		if j != nil && (caller.UID == 0 || j.rec.Job.UID == caller.UID) {
			items = append(items, acctItem{id: j.rec.Job.ID, job: &j.rec.Job})
		}
	}
	addRem := func(a *arrayJob) {
		if r := a.remJob(); r != nil && r.State.Terminal() && (caller.UID == 0 || r.UID == caller.UID) {
			items = append(items, acctItem{id: remView(a).ID, rem: a})
		}
	}
	switch {
	case len(f.IDs)+len(f.Tasks) > 0:
		for _, id := range f.IDs {
			if a := q.array(id); a != nil {
				for pos := 0; pos < a.count; pos++ {
					addJob(q.job(a.base + uint64(pos)))
				}
				addRem(a)
			} else {
				addJob(q.job(id))
			}
		}
		for _, t := range f.Tasks {
			if a := q.array(t.JobID); a != nil {
				if id, ok := a.idOf(t.Task); ok {
					addJob(q.job(id))
				}
			}
		}
	default:
		for _, j := range q.jobs {
			addJob(j)
		}
		for _, a := range q.arrays {
			addRem(a)
		}
	}
	return items
}
