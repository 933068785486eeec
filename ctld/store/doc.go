// Package store keeps corral-ctld's durable state in one bbolt file: every
// job record (spec, state, history), the steps of jobs, the job-ID
// sequence and the nodes that ever registered.
//
// Every write returns only after its transaction is on disk. New jobs go
// through a group committer: concurrent submits share one commit (one pair
// of fsyncs) instead of queueing for one each, so durability does not cap
// throughput. (bbolt's DB.Batch does the same with a fixed delay; measured
// on the 2-core dev VM it was slower and added latency for a lone submit,
// so it is used only for node records.) Job IDs come from the jobs
// bucket's sequence, which starts at 1 and never goes back, even across
// restarts. An array job is one record however many tasks it has
// (arrays.go): its submit reserves one ID per task, and a task gets a job
// record of its own only when it starts. The fairshare usage ledger is one
// record, replaced at every save (usage.go). Job steps are records under
// their job, written in the same transaction as the job when both change,
// with an index of the steps still running so that a restart reads only
// those (steps.go). Damaged files are refused, not
// mended: the pages are checked from the raw bytes before bbolt maps them
// (pages.go), and a marker file beside the store (marker.go) keeps a
// missing or emptied store from passing for a new one. The store knows
// nothing about scheduling: the controller decides what to write and
// keeps its working copy in memory.
package store
