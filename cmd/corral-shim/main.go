// Command corral-shim supervises one job: corral-noded starts one per job
// (`corral-shim <jobdir>`, in its own session, so it outlives a noded
// restart) and it creates the job's container, enforces its time limit
// and cancel, and writes its result (package noded/shim); noded keeps one
// started ahead as `corral-shim --spare`, which reads its job directory
// from a pipe when a launch comes. It is also a
// job step's runner on a node (`corral-shim step <jobdir> <stepid>`),
// which starts the step's tasks in the job's running container (its
// corral-init forks them; libcontainer's exec where it cannot).
//
// libcontainer re-executes this same binary as `corral-shim init` inside
// every new container, so every job starts it twice. It is a binary of its
// own, rather than a mode of corral-noded, to keep those starts cheap: it
// links only the shim and the container code (half of corral-noded's size,
// half of its start-up cost; docs/benchmarks.md).
//
// Build with cgo (libcontainer's nsenter is C) and -tags seccomp, beside
// corral-noded: go build -tags seccomp ./cmd/corral-shim.
package main

import (
	"os"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

func init() {
	// libcontainer re-executes this binary as "<exe> init" inside the new
	// container; that must happen before anything else runs.
	container.InitIfRequested()
}

func main() {
	os.Exit(shim.Main(os.Args[1:]))
}
