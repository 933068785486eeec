// Package container builds and runs a job's container with runc's
// libcontainer used as a Go library.
//
// A job sees the host file system read-only: its rootfs is an empty per-job
// directory, where a small tmpfs holds one recursive read-only bind mount
// per entry of the host's "/" (except /proc, /sys, /dev and /tmp) and the
// host's top-level symlinks recreated as symlinks. Start mounts these
// itself, in a mount namespace of its own that runc's init inherits
// (view.go), so the host's namespace never holds them. On top come a fresh /proc, a tmpfs /dev
// with the default devices, devpts, a private /dev/shm of the job's size,
// mqueue, a private tmpfs /tmp no larger than the job's memory limit (its
// pages count against the job's memory), /sys read-only, a cgroup mount
// showing the job's own cgroup (a cgroup namespace, so /sys/fs/cgroup
// holds the job's limits), and the caller's binds: the work directory and
// home (writable), corral-init and the script (read-only). Paths in Spec.Hide (noded's state
// directory) are masked. An image job's root is an overlay whose upper
// layer is a tmpfs no larger than the memory limit, like /tmp.
//
// Start creates the container, checks that each bind the caller checked
// (Bind.Checked) is what runc mounted, then lets the job exec; Spec.Stop
// ends a setup that waits on a file system (ErrStopped).
//
// Adopt gives a container started ahead of any job (a prepared one: no
// binds but corral-init's, no limit but the number of processes) to a
// job whose container depends on the job only through its binds, limits
// and name (adopt.go): the binds are cloned on the host, checked and
// attached from a thread in the container's mount namespace, /tmp and
// /dev/shm resized, the cgroup's limits set (its name stays), and the
// state renamed to the job's container ID. runc is then off the job's
// path.
//
// Open loads a running container (one another process started: a job
// step's runner and the job's shim are different processes) and Exec
// starts a further process in it: the container's namespaces, cgroup,
// seccomp filter, capabilities and umask, with no_new_privs, on pipes or
// on a new terminal of the container's devpts.
//
// Namespaces: PID, mount, IPC, UTS and cgroup; the network is the host's.
// Every job runs with no_new_privs and, when the binary is built with
// -tags seccomp, under DefaultSeccomp; non-root jobs hold no capabilities,
// root jobs a fixed set without CAP_SYS_ADMIN (docs/security.md).
//
// Programs that start containers must let libcontainer re-execute them as
// the container's init: call InitIfRequested first thing (this package
// imports libcontainer/nsenter, whose C constructor runs before Go).
package container
