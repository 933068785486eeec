// Package fairshare is the controller's usage accounting: it charges
// every run into a priority.Ledger (billing x seconds, by user and
// account), follows when pending jobs became eligible, says which
// accounts a user may charge, and computes multifactor priorities and the
// corral prio and corral share views from them.
//
// A State owns its ledger, the eligibility it follows and the fairshares
// of the current cycle, all behind its one mutex; nothing outside the
// package touches them. Its configuration (calculator, accounts, weights)
// is fixed by New and read without the lock. The job records are the
// controller's: every method that reads them takes them as an iterator or
// a Cluster that the caller serves under its own lock, which it takes
// before State's, never after (the controller's lock order, in ctld's
// doc.go).
//
// The rule that keeps usage exact across a crash: chargedTo is a moment
// up to which every run has been charged, each up to its end if it ended
// earlier, and nothing after it. A save (Record) writes the ledger with
// chargedTo (store.UsageRecord.ValidTo), and a cycle or save first charges
// every running job up to now, so the rule holds at every save. A restart
// (Restore) loads the saved ledger and charges, for every run the job
// records show (the current one from StartTime to EndTime, or to now if it
// is running; the earlier ones in Job.Runs), only the part after ValidTo.
// Job records are committed before anything acts on them, so whatever ran
// after the last save is in them, and whatever ran before it is in the
// ledger: nothing is charged twice, nothing is lost. The time between two
// saves is re-charged from the records, not lost.
//
// Two things are charged by what the controller knew rather than by the
// records: a run whose end arrives after a cycle already charged it past
// that end keeps the extra (at most one cycle's worth, and never again
// after a restart, since the record's end is before ValidTo), and a launch
// that fails leaves no run in the record, so it is charged only for the
// cycles that saw it running.
package fairshare
