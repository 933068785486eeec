// Package sched decides which pending jobs start now and where, and when the
// others are expected to start.
//
// It is pure: Plan takes a Snapshot (nodes, partitions, running jobs with
// their expected ends, pending jobs with their priorities, and the time "now")
// and returns a Plan. It does no I/O, reads no clock and keeps no state
// between calls, so the controller and the trace simulator run the very same
// code and a plan is identical for identical input.
//
// Resources are a small vector (CPUs, memory, fractional GPU units) per
// node; callers translate job requests and node capacities into it.
package sched
