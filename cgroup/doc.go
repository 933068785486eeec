// Package cgroup decides where a job's cgroup lives and what limits it gets,
// and reads those limits and the job's usage back.
//
// Ownership: libcontainer's cgroup manager (github.com/opencontainers/cgroups,
// fs for v1, fs2 for v2) creates a job's cgroup when the container starts,
// writes the limits and removes the directories when the container is
// destroyed. This package only computes the cgroups.Cgroup Path and the
// cgroups.Resources handed to it, detects the hierarchy, prepares noded's own
// cgroup on pure v2, and reads files.
//
// Placement: a job cgroup always nests under the cgroup noded runs in; no
// other process's cgroup is moved or written.
//
//   - v1 and hybrid: the Path is RELATIVE ("corral-<node>-<hash>-job<id>"). The fs
//     manager resolves a relative path per controller against the calling
//     process's own cgroup (cgroups.GetOwnCgroupPath), so the job lands in
//     <own cgroup of that controller>/corral-<node>-<hash>-job<id> in every
//     hierarchy (memory under /process_api/<id> here, cpu under /). The shim
//     that creates the container runs in noded's cgroups, so "own" is noded's.
//     On hybrid hosts the manager also joins the cgroup2 hierarchy at
//     /sys/fs/cgroup/unified/<name> (the library ignores the own cgroup there).
//   - pure v2: the no-internal-processes rule forbids enabling controllers for
//     children of a cgroup that still holds processes. At start noded moves
//     ITSELF (and only itself) into the leaf <own>/corral-<node>-<hash>.noded, then
//     enables cpu, cpuset, memory and pids in <own>/cgroup.subtree_control.
//     Jobs get the ABSOLUTE Path <own>/corral-<node>-<hash>-job<id>, siblings of the
//     leaf. This needs <own> to hold no other processes: run noded in a unit
//     of its own (systemd Delegate=yes); Prepare says so when it is not.
//
// Limits: a cpuset of the cores noded allocated plus a CFS quota of
// N x period, a memory hard limit with swap capped at the same total where
// the kernel accounts swap, and a pids limit.
package cgroup
