// Package ctld is corral's controller: it owns every job's record and
// lifecycle, knows the nodes, and decides (through a sched.Planner) what
// runs where.
//
// It serves two planes. Users reach it over HTTP/JSON on a Unix socket;
// their identity comes from the socket's peer credentials, never from a
// request body. Node daemons reach it over HTTP/JSON on TCP, every request
// signed with the cluster key (api.Sign/api.Verify).
//
// State lives in one bbolt file (package ctld/store) and, for speed, in
// memory. The rule everywhere: a change is on disk before anything acts on
// it or anyone is told about it, so a kill -9 at any moment loses nothing
// that was acknowledged. Scheduling runs in one goroutine, woken by events
// (submit, job end, cancel, node change) and by a timer; it builds a
// sched.Snapshot, asks the Planner, and applies the Plan. No scheduling
// policy lives here.
package ctld
