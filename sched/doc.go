// Package sched decides which pending jobs start now and where, and when the
// others are expected to start.
//
// It is pure: Plan takes a Snapshot (nodes, partitions, running jobs with
// their expected ends, pending jobs with their priorities, and the time "now")
// and returns a Plan. It does no I/O, reads no clock and keeps no state
// between calls (its working arrays come from a pool, scratch.go, and
// carry nothing over), so the controller and the trace simulator run the
// very same code and a plan is identical for identical input.
//
// Resources are a small vector (CPUs, memory, fractional GPU units) per
// node; callers translate job requests and node capacities into it. A
// node that lists its GPUs (Node.GPUs) is planned per device as well: a
// job's fGPU must fit on the devices by package gpu's packing rule over
// its whole run (gpus.go), and starts and estimates name the shares.
//
// Group limits (Snapshot.GroupLimits, groups.go) cap what the members of
// a group hold at once: an array's %N, a singleton name, a policy's
// running limits. The caller says which groups a job is in and what it
// counts there; every planner checks them at each start it makes, so the
// controller, its test-only submits and the simulator stop at the same
// limits.
//
// A job may be limited to some nodes (Pending.Allowed: its -w, -x and
// -C, resolved by the caller); every planner plans it only there.
//
// Two planners implement Planner: FirstFit, the baseline, and Backfill
// (modes conservative, easy and fcfs). Backfill keeps an availability
// timeline per node (timeline.go) so every reservation is exact, and a
// search index of lower bounds per partition (index.go) so that finding a
// job's earliest start does not look at every node (a node alone in its
// partitions keeps none: its searches start where their callers say);
// placement ranks the nodes that can start a job with small Nomad-style
// iterators (iter.go).
// The guard (guard.go) plans the jobs that have waited past a bound
// first, with reservations; set selection (pack.go) starts EASY's
// candidates by the set that fills the free CPUs best. A job's fair start
// (fairstart.go), computed once and kept by the caller, can bring its
// guard forward. With StartsOnly (the simulator's plans), conservative
// planning stops once no job left could start now (nowfits.go) and
// returns what it left free (Headroom), against which the simulator tests
// later arrivals before planning again, and on a one-node partition a
// job's search begins where an easier job's ended (startfloor.go); easy
// takes its WFP candidates best first, skipping those no node has the
// CPUs free for (startsonly.go). A plan's working arrays come from a
// pool (scratch.go).
package sched
