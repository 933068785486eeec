package ctld

import (
	"context"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/gpu"
)

// The controller's side of usage accounting (package fairshare): the
// rules the ledger applies, charging the runs that commits end, and
// keeping the ledger in the store.

// usageRules are the controller's rules that package fairshare applies.
var usageRules = fairshare.Rules{
	PhysicalGPUs: gpu.Physical,
	HeldOrEarly:  func(job *api.Job, now time.Time) bool { return heldOrEarly(job, now) != "" },
}

// checkAccount fills in a job's account (the owner's default) or refuses
// one the owner may not charge.
func (s *Server) checkAccount(owner string, spec *api.JobSpec) error {
	account, err := s.fs.Account(owner, spec.Account)
	if err != nil {
		return fault.Errorf(fault.Invalid, "%s", err)
	}
	spec.Account = account
	return nil
}

// loadUsage restores the ledger saved last and charges what ran since
// (New calls it once the jobs are loaded).
func (s *Server) loadUsage(now time.Time) error {
	rec, err := s.store.Usage()
	if err != nil {
		return err
	}
	if err := s.fs.Restore(rec, records(s.q.all()), now); err != nil {
		s.log.Printf("fairshare: %v; rebuilt it from the job records", err)
	}
	return nil
}

// saveUsage charges running jobs up to now and stores the ledger.
func (s *Server) saveUsage(now time.Time) error {
	s.mu.RLock()
	rec, err := s.fs.Record(records(s.q.unfinished()), now, s.q.pendingKey)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	return s.store.PutUsage(rec)
}

// usageLoop saves the ledger every fairshare.SaveInterval until ctx ends
// (Close saves it a last time).
func (s *Server) usageLoop(ctx context.Context) {
	t := time.NewTicker(fairshare.SaveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := s.saveUsage(now); err != nil {
				s.log.Printf("fairshare: saving usage: %v (it is re-charged from the job records after a restart)", err)
			}
		}
	}
}

// pendingKey reports whether id is a pending job or an array job
// with pending tasks in its remainder.
func (q *queue) pendingKey(id uint64) bool {
	if j := q.active[id]; j != nil && j.state() == api.StatePending {
		return true
	}
	return q.arrays[id].pendingRem() != nil
}
