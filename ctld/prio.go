package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/priority"
)

// The user-plane views of multifactor priority: GET /v1/prio (corral prio,
// sprio's view of pending jobs' factors) and GET /v1/share (corral share,
// sshare's view of the account tree's usage and fairshare).

// prio computes every matching pending job's priority afresh at now.
func (s *Server) prio(filter api.PrioFilter, now time.Time) api.PrioResponse {
	var ids map[uint64]bool // every pending job, unless IDs are named
	if len(filter.IDs) > 0 {
		ids = make(map[uint64]bool, len(filter.IDs))
		for _, id := range filter.IDs {
			ids[id] = true
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	pending, owners := s.q.pendingEntries(ids)
	return s.fs.Prio(pending, owners, s.nodes.size(), filter, now)
}

// share builds sshare's view of the tree at now: every configured
// account and user, and every user with usage or a pending job.
func (s *Server) share(users []string, now time.Time) api.ShareResponse {
	s.mu.RLock()
	_, owners := s.q.pendingEntries(map[uint64]bool{})
	s.mu.RUnlock()
	return s.fs.Share(owners, users, now)
}

// pendingEntries lists the pending jobs and array remainders that ids
// names (a job by its ID or its array's; every one for nil), in no
// particular order, and the owner (user, account) of every pending job
// and remainder, each once. The owners come from the queue's per-owner
// counts and named jobs are looked up, so the dashboard's 200 rows cost
// O(rows + owners + arrays), not a walk of 100,000 pending jobs. s.mu
// is held (read is enough).
func (q *queue) pendingEntries(ids map[uint64]bool) ([]fairshare.Pending, []priority.Job) {
	var out []fairshare.Pending
	var owners []priority.Job
	seen := make(map[priority.Assoc]bool)
	owner := func(k priority.Assoc) {
		if !seen[k] {
			seen[k] = true
			owners = append(owners, priority.Job{User: k.User, Account: k.Account})
		}
	}
	for k := range q.pendingOwners {
		owner(k)
	}
	add := func(j *job) {
		if j != nil && j.state() == api.StatePending {
			out = append(out, fairshare.Pending{View: &j.rec.Job, Job: &j.rec.Job})
		}
	}
	if ids == nil {
		for j := range q.pendingByID.each {
			add(j)
		}
	} else {
		for id := range ids {
			if j := q.active[id]; j != nil && !(j.rec.Job.ArrayJobID != 0 && ids[j.rec.Job.ArrayJobID]) {
				add(j) // a task whose array is named too is added with the array's
			}
			if a := q.arrays[id]; a != nil {
				for pos := 0; pos < a.count; pos++ {
					if j := q.active[a.base+uint64(pos)]; j != nil && j.rec.Job.ArrayJobID == id {
						add(j)
					}
				}
			}
		}
	}
	for _, a := range q.eachArray() {
		if r := a.pendingRem(); r != nil && a.remCount > 0 {
			owner(priority.Assoc{User: r.User, Account: r.Spec.Account})
			if v := remView(a); ids == nil || ids[v.ID] || ids[v.ArrayJobID] {
				out = append(out, fairshare.Pending{View: &v, Job: r})
			}
		}
	}
	return out, owners
}
