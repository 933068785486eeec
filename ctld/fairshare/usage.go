package fairshare

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// chargeSpan charges the part of a run [start, end) after chargedTo.
// f.mu is held.
func (f *State) chargeSpan(job *api.Job, nodes int, start, end time.Time) {
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
	f.ledger.Charge(a.User, a.Account, f.Billing(job, nodes), from, end)
}

// chargeRunning charges every running job of active up to now and moves
// chargedTo there. f.mu is held.
func (f *State) chargeRunning(active iter.Seq[*api.Job], now time.Time) {
	if !now.After(f.chargedTo) {
		return
	}
	for job := range active {
		if job.State == api.StateRunning && job.StartTime != nil {
			f.chargeSpan(job, len(job.Nodes), *job.StartTime, now)
		}
	}
	f.chargedTo = now.Round(0)
}

// recharge charges, for every run the job records show, the part after
// chargedTo up to now (the rule in the package doc). f.mu is held.
func (f *State) recharge(jobs iter.Seq[*api.Job], now time.Time) {
	for job := range jobs {
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

// ChargeEnd charges a run that a change from old to next ends (RUNNING to
// any other state) up to the end next gives; the controller calls it for
// every change it commits, before installing it. A failed launch records
// no run and is not charged here. An end ahead of now is charged to now.
func (f *State) ChargeEnd(old, next *api.Job, now time.Time) {
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
	f.mu.Lock()
	f.chargeSpan(old, len(old.Nodes), *old.StartTime, earlier(end, now))
	f.mu.Unlock()
}

// Restore installs a saved record (nil: none was ever saved) and charges,
// from the job records, every run after the record's time up to now.
// Without a usable record every recorded run is charged from its start:
// the job records hold every run, so an unreadable record (reported as
// the error) loses nothing.
func (f *State) Restore(rec *store.UsageRecord, jobs iter.Seq[*api.Job], now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
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

// Record charges the running jobs of active up to now and returns what
// to save, valid to chargedTo; the eligibility of jobs no longer pending
// is forgotten.
func (f *State) Record(active iter.Seq[*api.Job], now time.Time, pending func(id uint64) bool) (*store.UsageRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chargeRunning(active, now)
	f.ledger.Prune(f.chargedTo, pruneBelow)
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
