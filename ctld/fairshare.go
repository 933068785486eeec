package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/priority"
)

// Fairshare usage: the controller charges every run of every job into a
// priority.Ledger (billing x seconds, by user and account) and keeps the
// ledger in the state file, so priorities stay right across restarts.
//
// The rule that keeps usage exact across a crash: chargedTo is a moment
// up to which every run has been charged, each up to its end if it ended
// earlier, and nothing after it. A save writes the ledger with chargedTo
// (store.UsageRecord.ValidTo), and a cycle or save first charges every
// running job up to now, so the rule holds at every save. A restart loads
// the saved ledger and charges, for every run the job records show (the
// current one from StartTime to EndTime, or to now if it is running; the
// earlier ones in Job.Runs), only the part after ValidTo. Job records are
// committed before anything acts on them, so whatever ran after the last
// save is in them, and whatever ran before it is in the ledger: nothing
// is charged twice, nothing is lost. The time between two saves is
// re-charged from the records, not lost.
//
// Two things are charged by what the controller knew rather than by the
// records: a run whose end arrives after a cycle already charged it past
// that end keeps the extra (at most one cycle's worth, and never again
// after a restart, since the record's end is before ValidTo), and a launch
// that fails leaves no run in the record, so it is charged only for the
// cycles that saw it running.

// usageSaveInterval: the ledger is saved at most this often, and at
// shutdown; a crash re-charges the rest from the job records.
const usageSaveInterval = 5 * time.Second

// usagePruneBelow: associations whose decayed usage falls below this many
// billing-seconds are forgotten at a save, so the ledger does not grow
// without bound.
const usagePruneBelow = 1e-6

// fairshare is the controller's priority state: the calculator built from
// the configuration, the usage ledger, and when pending jobs became
// eligible. Lock order: Server.mu before fairshare.mu.
type fairshare struct {
	calc *priority.Calculator // PriorityType=basic: built with zero weights
	// accounts are the accounts jobs may name; members, per configured
	// user, the accounts they may use (their default first). A user
	// nobody configured may use only the default account.
	accounts map[string]bool
	members  map[string][]string
	fallback string
	// What corral share and prio show of the configuration.
	weights            priority.Weights
	algorithm          priority.Algorithm
	shareAccounts      []priority.Account
	shareUsers         []priority.User
	fallbackConfigured bool

	mu        sync.Mutex
	ledger    *priority.Ledger
	chargedTo time.Time
	// released: when pending jobs became eligible after being blocked (a
	// hold, a begin time, a dependency); blocked: jobs not eligible now.
	// Keyed by job ID (an array remainder by its array job ID).
	released map[uint64]time.Time
	blocked  map[uint64]bool
	cycle    cycleShares
}

// cycleShares is what one scheduling cycle computes once for all its
// pending jobs.
type cycleShares struct {
	at     time.Time
	fs     priority.Fairshares
	cl     priority.Cluster
	owners []priority.Job
}

func newFairshare(sc config.Scheduling) (*fairshare, error) {
	pc := sc.Priority
	if sc.Basic {
		pc.Weights = priority.Weights{} // every job 0: submit order
	}
	calc, err := priority.New(pc)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f := &fairshare{calc: calc, accounts: map[string]bool{}, members: map[string][]string{},
		fallback: calc.Tree().Resolve("", "").Account,
		ledger:   calc.NewLedger(), released: map[uint64]time.Time{}, blocked: map[uint64]bool{}}
	f.weights, f.algorithm, f.shareAccounts, f.shareUsers = pc.Weights, pc.Algorithm, pc.Accounts, pc.Users
	if f.algorithm == "" {
		f.algorithm = priority.FairTree
	}
	f.accounts[f.fallback] = true
	for _, a := range pc.Accounts {
		f.accounts[a.Name] = true
		f.fallbackConfigured = f.fallbackConfigured || a.Name == f.fallback
	}
	for _, u := range pc.Users {
		f.members[u.Name] = append(f.members[u.Name], u.Account)
	}
	return f, nil
}

// checkAccount fills in a job's account (the owner's default) or refuses
// one the owner may not charge.
func (s *Server) checkAccount(owner string, spec *api.JobSpec) error {
	f := s.fs
	if spec.Account == "" {
		spec.Account = f.calc.Tree().Resolve(owner, "").Account
		return nil
	}
	if !f.accounts[spec.Account] {
		names := make([]string, 0, len(f.accounts))
		for a := range f.accounts {
			names = append(names, a)
		}
		sort.Strings(names)
		return errorf(http.StatusBadRequest, "account %s does not exist (accounts: %s); nothing was submitted",
			spec.Account, strings.Join(names, ", "))
	}
	allowed, configured := f.members[owner]
	if !configured {
		allowed = []string{f.fallback}
	}
	if !slices.Contains(allowed, spec.Account) {
		return errorf(http.StatusBadRequest, "user %s may not charge account %s (%s's accounts: %s); nothing was submitted",
			owner, spec.Account, owner, strings.Join(allowed, ", "))
	}
	return nil
}

// billing is what a run of job on nodes nodes costs per second.
func (f *fairshare) billing(job *api.Job, nodes int) float64 {
	n := max(nodes, 1)
	return f.calc.Billing(priority.Alloc{CPUs: job.CPUs * n, MemBytes: job.MemBytes * int64(n), GPUs: physicalGPUs(job, n)})
}

// chargeSpan charges the part of a run [start, end) after chargedTo.
// f.mu is held.
func (f *fairshare) chargeSpan(job *api.Job, nodes int, start, end time.Time) {
	// Usage is measured in wall-clock time, as the records store times:
	// a restart then computes exactly what the running controller did.
	from, end := start.Round(0), end.Round(0)
	if f.chargedTo.After(from) {
		from = f.chargedTo
	}
	if !end.After(from) {
		return
	}
	a := f.calc.Tree().Resolve(job.User, job.Spec.Account)
	f.ledger.Charge(a.User, a.Account, f.billing(job, nodes), from, end)
}

// chargeRunning charges every running job up to now and moves chargedTo
// there. f.mu is held, and Server.mu (read is enough) for active.
func (f *fairshare) chargeRunning(active map[uint64]*job, now time.Time) {
	if !now.After(f.chargedTo) {
		return
	}
	for _, j := range active {
		if job := &j.rec.Job; job.State == api.StateRunning && job.StartTime != nil {
			f.chargeSpan(job, len(job.Nodes), *job.StartTime, now)
		}
	}
	f.chargedTo = now.Round(0)
}

// recharge charges, for every run the job records show, the part after
// chargedTo up to now (see the rule at the top of this file).
func (f *fairshare) recharge(jobs map[uint64]*job, now time.Time) {
	for _, j := range jobs {
		job := &j.rec.Job
		for _, r := range job.Runs {
			if !r.StartTime.IsZero() {
				f.chargeSpan(job, len(r.Nodes), r.StartTime, earlier(r.EndTime, now))
			}
		}
		if job.StartTime != nil {
			end := now
			if job.EndTime != nil {
				end = earlier(*job.EndTime, now)
			}
			f.chargeSpan(job, len(job.Nodes), *job.StartTime, end)
		}
	}
	if now.After(f.chargedTo) {
		f.chargedTo = now.Round(0)
	}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// chargeEndLocked charges a run that c ends (RUNNING to any other state)
// up to the end its record gives; commitAllLocked calls it for every
// change, before installing it. A failed launch records no run and is not
// charged here. An end ahead of the controller's clock is charged to now.
func (s *Server) chargeEndLocked(c change) {
	old, next := &c.j.rec.Job, &c.next.Job
	if old.State != api.StateRunning || next.State == api.StateRunning || old.StartTime == nil {
		return
	}
	var end time.Time
	switch {
	case next.EndTime != nil:
		end = *next.EndTime
	case len(next.Runs) > len(old.Runs):
		end = next.Runs[len(next.Runs)-1].EndTime
	default:
		return
	}
	f := s.fs
	f.mu.Lock()
	f.chargeSpan(old, len(old.Nodes), *old.StartTime, earlier(end, time.Now()))
	f.mu.Unlock()
}

// loadUsage restores the ledger saved last and charges what ran since
// (New calls it once the jobs are loaded).
func (s *Server) loadUsage(now time.Time) error {
	rec, err := s.store.Usage()
	if err != nil {
		return err
	}
	f := s.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.restore(rec, s.jobs, now); err != nil {
		s.log.Printf("fairshare: %v; rebuilt it from the job records", err)
	}
	return nil
}

// restore installs a saved record (nil: none was ever saved) and charges,
// from the job records, every run after the record's time up to now.
// Without a usable record every recorded run is charged from its start:
// the job records hold every run, so an unreadable record (reported as
// the error) loses nothing. f.mu is held.
func (f *fairshare) restore(rec *store.UsageRecord, jobs map[uint64]*job, now time.Time) error {
	var bad error
	if rec != nil {
		l := f.calc.NewLedger()
		if err := json.Unmarshal(rec.Ledger, l); err != nil {
			bad = fmt.Errorf("stored usage unreadable: %w", err)
		} else {
			f.ledger, f.chargedTo = l, rec.ValidTo
			for id, t := range rec.Released {
				f.released[id] = t
			}
			for _, id := range rec.Blocked {
				f.blocked[id] = true
			}
		}
	}
	f.recharge(jobs, now)
	return bad
}

// saveUsage charges running jobs up to now and stores the ledger.
func (s *Server) saveUsage(now time.Time) error {
	f := s.fs
	s.mu.RLock()
	f.mu.Lock()
	rec, err := f.record(s.active, now, s.pendingKeyLocked)
	f.mu.Unlock()
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	return s.store.PutUsage(rec)
}

// record charges running jobs up to now and returns what to save, valid
// to chargedTo; eligibility of jobs no longer pending is forgotten. f.mu
// is held, and Server.mu (read) for active and pending.
func (f *fairshare) record(active map[uint64]*job, now time.Time, pending func(uint64) bool) (*store.UsageRecord, error) {
	f.chargeRunning(active, now)
	f.ledger.Prune(f.chargedTo, usagePruneBelow)
	for id := range f.released {
		if !pending(id) {
			delete(f.released, id)
		}
	}
	for id := range f.blocked {
		if !pending(id) {
			delete(f.blocked, id)
		}
	}
	ledger, err := json.Marshal(f.ledger)
	if err != nil {
		return nil, err
	}
	rec := &store.UsageRecord{ValidTo: f.chargedTo, Ledger: ledger, Released: make(map[uint64]time.Time, len(f.released))}
	for id, t := range f.released {
		rec.Released[id] = t
	}
	for id := range f.blocked {
		rec.Blocked = append(rec.Blocked, id)
	}
	slices.Sort(rec.Blocked)
	return rec, nil
}

// pendingKeyLocked reports whether id is a pending job or an array job
// with pending tasks in its remainder.
func (s *Server) pendingKeyLocked(id uint64) bool {
	if j := s.active[id]; j != nil && j.state() == api.StatePending {
		return true
	}
	a := s.pipe.arrays[id]
	return a != nil && a.rem != nil && a.rem.Job.State == api.StatePending
}

// usageLoop saves the ledger every usageSaveInterval until ctx ends (Close
// saves it a last time).
func (s *Server) usageLoop(ctx context.Context) {
	t := time.NewTicker(usageSaveInterval)
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
