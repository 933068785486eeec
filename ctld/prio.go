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
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fs.Prio(s.q.pendingEntries(), s.nodes.size(), filter, now)
}

// share builds sshare's view of the tree at now: every configured
// account and user, and every user with usage or a pending job.
func (s *Server) share(users []string, now time.Time) api.ShareResponse {
	s.mu.RLock()
	var owners []priority.Job
	for _, e := range s.q.pendingEntries() {
		owners = append(owners, priority.Job{User: e.Job.User, Account: e.Job.Spec.Account})
	}
	s.mu.RUnlock()
	return s.fs.Share(owners, users, now)
}

// pendingEntries lists pending jobs and array remainders, in no
// particular order (sorting 100,000 of them for every dashboard page cost
// more than the rest of the page). s.mu is held (read is enough).
func (q *queue) pendingEntries() []fairshare.Pending {
	var out []fairshare.Pending
	for _, j := range q.unfinished() {
		if j.state() == api.StatePending {
			out = append(out, fairshare.Pending{View: &j.rec.Job, Job: &j.rec.Job})
		}
	}
	for _, a := range q.eachArray() {
		if r := a.pendingRem(); r != nil && a.remCount > 0 {
			v := remView(a)
			out = append(out, fairshare.Pending{View: &v, Job: r})
		}
	}
	return out
}
