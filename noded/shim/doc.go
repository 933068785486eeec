// Package shim is the per-job supervisor: `corral-shim <jobdir>`.
//
// noded starts one shim per job (cmd/corral-shim, in its own session, in
// noded's cgroups) so that jobs do not depend on noded's lifetime. The shim
// reads launch.json, opens the job's output files as the job's user,
// writes the script, starts the container (package container) with
// corral-init as PID 1, enforces the time limit, handles cancel, waits,
// reads the cgroup's usage, destroys the container and writes
// result.json atomically. Then it says EndedLine on its status
// pipe, so noded reports the end at once, and deletes the script. The
// job's /tmp is a tmpfs in its container (package container).
//
// The job runs on every node of its allocation. Launch.Role says what
// this node does: "batch" (or "") runs the script; "extern" runs no
// script: the container, its cgroup, /tmp, /dev/shm, mounts and GPUs are
// set up exactly as for batch, with corral-init holding it (--hold) until
// the job is cancelled or reaches its time limit, so that the job's steps
// can run in it. An extern node opens no output files (the batch node
// writes the job's) and reports its end like any job (CANCELLED when
// cancelled; ctld ignores extern ends it asked for).
//
// `corral-shim step <jobdir> <stepid>` is a step's runner on this node:
// it reads launch.json and steps/<stepid>/step.json (StepJob), connects
// to srun, waits for the job's container if it is still starting (the
// started file, by inotify: noded starts runners without waiting; or,
// while the container starts, it queues its tasks on the shim's spawn
// socket, which corral-init serves once it runs: stepearly.go), starts
// one process per rank in the job's running container (the job's user,
// namespaces and cgroup, no new privileges: corral-init forks each on the
// runner's request over the spawn socket, container/initproto), relays the tasks' I/O,
// signals and exits to srun (package stepio), and writes the
// step's result.json (StepResult). noded starts it detached, with the
// same status pipe on fd 4 ("started <time>", then EndedLine); SIGTERM
// cancels the step (SIGTERM to the tasks, SIGKILL after the kill wait).
// A step launched with --mpi=pmi2 also gets a PMI server (package pmi):
// each task's PMI socket is its fd 3, and the fences go through srun.
//
// A spare shim (`corral-shim --spare`, spare.go) waits for its job on a
// pipe; handed a Preparation first, it starts an extern job's container
// for that user meanwhile, which the job adopts if it fits (prepared.go:
// container.Adopt), and destroys it otherwise. Its directory
// <state>/spares/<token> holds owner (its PID and start time) and the
// prepared container's rootfs/.
//
// Job directory (<state>/jobs/<id>/):
//
//	launch.json  Job: the launch request plus what noded decided, its cgroup included (written by noded)
//	shim.pid     the shim's PID and start time (written by the shim at start)
//	started      the job's start time, once its process runs; corral-init's PID; its cgroups (startedText)
//	spawn        the shim's PID and its descriptor of the steps' spawn socket (stepearly.go)
//	result.json  Result, written last and atomically
//	shim.log     the shim's own stdout and stderr
//	script       the job script (mode 0755, owned by the user), bound at /.corral/script
//	rootfs/      the container's root: an image's overlay, or an empty directory here and,
//	             in the container's mount namespace only, a small tmpfs of mount points
//	             over the host view
//	steps/<id>/  a step's step.json, runner.pid and result.json (StepJob)
//
// An adopted container's root is the preparation's rootfs/, not the job
// directory's. rootfs/ is gone before result.json appears; script is deleted just
// after it (noded removes the whole directory once the shim exits). A noded
// that restarts can find live shims by shim.pid and finished ones by
// result.json; nothing in the shim depends on its parent staying alive.
//
// Talking to noded: fd 3 (if open) is read for cancel requests (the byte
// 'c'); fd 4 (if open) gets "started <RFC 3339 time>\n" once the job runs,
// "configuring <time> <what>\n" before slow preparation (an image pull),
// and EndedLine once result.json is written.
// SIGTERM to the shim also cancels the job.
package shim
