// Package sim replays Standard Workload Format (SWF) traces through
// corral's own priority and sched packages in virtual time, and measures
// the result: waits and bounded slowdowns with their tails, utilization,
// per-user fairness, the same by job width and length, and unfair starts
// against an EASY replay of the same trace.
//
// The machine is one node with as many CPUs as the trace has processors,
// so a job may run on any free processors, as on the traced machines (and
// as published simulators count them). Every arrival or end, per second
// of virtual time, triggers one plan; the jobs the plan starts now start.
// The slurm policy also plans at every bf_interval tick while jobs wait,
// as Slurm's backfill scheduler runs. A job runs for its recorded run
// time, killed at its requested time; a request of -1 means the run time
// itself (a second for a run of 0).
//
// Plans are made with sched.Backfill.StartsOnly, and the replay keeps
// between plans only what changes no decision: its queue in the
// planner's order (pendingorder.go), under FCFS priority the snapshot's
// queue itself (keptqueue.go), each job's fairshare and size parts of its
// priority until the next fairshare computation, and what the last
// conservative or EASY plan left free, against which arrivals are tested
// before planning again (headroom.go), and how deep such a plan went, so that
// the next one is given only the front of a deep queue and the whole
// queue only when a job behind it might start (prefixplan.go). It
// counts its queue by width (widths.go). An overloaded log's queue stays
// thousands deep for tens of thousands of plans (docs/benchmarks.md,
// "Archive logs with long queues").
//
// Compare replays several policies on one trace, concurrently and with
// the same results as one at a time; ShakeCompare repeats that on copies
// of the trace with jittered submit times and reports the spread.
//
// A line may carry three fields after SWF's 18 (Job.Array, ArrayMax,
// Singleton): the replay then keeps an array's %N limit and singleton
// dependencies through package groups, exactly as the controller does.
//
// Config.Site replays the default policy with a site's scheduling
// settings as the controller reads them (ctld/config.Scheduling, the
// file's own type), so a change can be tried on a trace first.
//
// `corral sim` (package cli) is the command line for it.
package sim
