// Package lifecycle owns a job's states: which events may happen to a job
// in which state (the table), and what each does to the job's record
// (Next). A job's first record comes from New; every state change the
// controller makes after that goes through Next; nothing else assigns
// api.Job.State.
//
// It is pure: a job and an event in, the next job or a refusal out, no
// clock, lock or store. The controller decides which event happened (a
// node's end report is an End, or a Timeout when the controller itself
// stopped the run at a lowered limit, or an EndRequeue when the run was
// being requeued) and persists the result; this package decides what that
// event means for the record: its state and reason, its history entry,
// its times and its earlier runs.
//
// Refusals are fault.Conflict errors (fault.Forbidden for a release only
// an operator may make), with the one-line text users are shown.
package lifecycle
