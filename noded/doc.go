// Package noded is the node daemon: it registers with ctld and heartbeats,
// serves the signed node plane (launch, signal, job list), allocates CPU
// cores, runs one shim per job (package shim, which owns the job's
// container; one is started ahead of the next launch: spareshim.go,
// and after an extern launch it prepares the container of that user's
// next extern job, which a launch that fits adopts: spareprepared.go)
// and reports job starts and ends through a durable event queue
// (package eventq).
//
// The daemon keeps little state of its own: the running-job table and the
// core allocation live in memory and in each job's directory
// (<state>/jobs/<id>/launch.json, which also names the job's cgroup:
// placement.go); unacknowledged events live in <state>/events, and a
// prepared spare's directory in <state>/spares/<token> (swept when its
// spare died). A job's end is queued on disk before its directory is
// removed, so an end is never lost, whether ctld or noded restarts.
//
// GPUs (gpus.go, gpudevices.go; docs/gpu.md): noded discovers its GPUs
// through NVML or a go-nvml DGX mock, reports them when it registers, and
// turns a launch's GPU shares into MIG instances, MPS control daemons (one
// per shared GPU, package mps), the job's GPU environment and the device
// nodes of its GPUs alone, through CDI when a CDI spec names them.
//
// Shims outlive noded (recover.go): at start noded reports the ends of
// jobs that finished while it was away, cleans up after shims that died,
// and reattaches to live ones, supervising them as if it had launched
// them.
//
// Job steps (steps.go, stepsupervise.go, steprecover.go; docs/steps.md):
// srun's POST /v1/steps carries no cluster signature but a step
// credential ctld signed; noded checks it, the job and its user, and
// starts one step runner per step (corral-shim step), detached like a
// shim. A step's end is queued like a job's; a job's end first ends its
// steps; a restart reattaches live runners as it does shims.
//
// Each job gets a controller socket of its own (jobsock.go,
// jobforward.go), bound into its container at /run/corral: noded admits
// only the job's processes (uid and cgroup, through the peer's pidfd) and
// forwards their requests to ctld as the job's user, so srun and the
// other commands work inside the job.
//
// With an https controller URL the node plane is TLS (tls.go: noded's
// certificate is issued by ctld's CA for a key made here), and
// credsock.go offers local users remote credentials for their own uid.
package noded
