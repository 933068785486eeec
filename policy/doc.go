// Package policy holds corral's per-user and per-account resource
// policies (seed 001: "stay within the resources your policy allows") and
// decides, without any I/O beyond its own file, whether a job may be
// submitted and whether a pending job may start now.
//
// A job is under its user's policy and its account's policy; every limit
// of both applies. Running limits (jobs, CPUs, memory, fGPU in use at
// once) keep a job PENDING with a reason naming the limit until the
// owner's running jobs have ended enough; per-job maxima and the
// pending-jobs maximum refuse the job at submit.
package policy
