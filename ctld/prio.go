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
	var want func(*api.Job) bool // every pending job, unless IDs are named
	if len(filter.IDs) > 0 {
		ids := make(map[uint64]bool, len(filter.IDs))
		for _, id := range filter.IDs {
			ids[id] = true
		}
		want = func(v *api.Job) bool { return ids[v.ID] || v.ArrayJobID != 0 && ids[v.ArrayJobID] }
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	pending, owners := s.q.pendingEntries(want)
	return s.fs.Prio(pending, owners, s.nodes.size(), filter, now)
}

// share builds sshare's view of the tree at now: every configured
// account and user, and every user with usage or a pending job.
func (s *Server) share(users []string, now time.Time) api.ShareResponse {
	s.mu.RLock()
	_, owners := s.q.pendingEntries(func(*api.Job) bool { return false })
	s.mu.RUnlock()
	return s.fs.Share(owners, users, now)
}

// pendingEntries walks the pending jobs and array remainders once: it
// lists those want takes (every one for nil), in no particular order, and
// the owner (user, account) of every one, each once. One walk, and no
// entry for a job not asked for: the dashboard asks for the 200 it shows,
// and with 100,000 queued each extra walk or sort cost more than the rest
// of its page. s.mu is held (read is enough).
func (q *queue) pendingEntries(want func(*api.Job) bool) ([]fairshare.Pending, []priority.Job) {
	var out []fairshare.Pending
	var owners []priority.Job
	seen := make(map[priority.Assoc]bool)
	var last priority.Assoc
	add := func(view, job *api.Job) {
		// Queues are long runs of one owner's jobs: only a new one is looked up.
		if k := (priority.Assoc{User: job.User, Account: job.Spec.Account}); k != last || len(owners) == 0 {
			last = k
			if !seen[k] {
				seen[k] = true
				owners = append(owners, priority.Job{User: k.User, Account: k.Account})
			}
		}
		if want == nil || want(view) {
			out = append(out, fairshare.Pending{View: view, Job: job})
		}
	}
	for _, j := range q.unfinished() {
		if j.state() == api.StatePending {
			add(&j.rec.Job, &j.rec.Job)
		}
	}
	for _, a := range q.eachArray() {
		if r := a.pendingRem(); r != nil && a.remCount > 0 {
			v := remView(a)
			add(&v, r)
		}
	}
	return out, owners
}
