// Package priority computes Slurm-style multifactor job priorities:
// fairshare from decayed usage, age and size, each a factor in [0, 1]
// times an integer weight.
//
// It is pure and deterministic: it reads no clock (every time is passed in)
// and does no I/O. The controller owns a Ledger, charges it for running
// jobs each cycle (Ledger.Charge with the job's Billing), stores it as JSON
// and, when it builds a scheduling snapshot, asks a Calculator for every
// pending job's priority. The trace simulator does the same in virtual time.
//
//   - Billing: TRES weights times allocated resources (CPU 1 per core,
//     memory 0.25 per GiB, GPU 2 per physical GPU by default).
//   - Usage: billing x seconds, decayed exponentially with a half-life and
//     optionally reset every period; stored as a value and the time it
//     refers to, decayed lazily, so it is exact across restarts.
//   - Fairshare: an account tree with shares; Fair Tree ranking (default)
//     or the classic 2^(-U/S).
//   - Age: eligible wait over a maximum age; size: nodes and CPUs relative
//     to the cluster, favouring large jobs or, optionally, small ones.
//
// Calculator.Priority returns each factor's value, weight and part (for
// `corral prio`); Tree.Report lists shares and usage per account and user
// (for `corral share`).
package priority
