// Package ctld is corral's controller: it owns every job's record and
// lifecycle, knows the nodes, and decides (through a sched.Planner) what
// runs where.
//
// It serves two planes. Users reach it over HTTP/JSON on a Unix socket;
// their identity comes from the socket's peer credentials, never from a
// request body. Node daemons reach it over HTTP/JSON on TCP, every request
// signed with the cluster key (api.Sign/api.Verify). That TCP port is TLS
// from a CA ctld creates (clusterTLS) and also serves the user plane to
// remote users with a noded-issued credential (tcpHandler). Every
// user-plane call passes one gate: identity, then package ctld/authz's
// per-uid rate limit, the route's role and its bound; docs/security.md
// has the matrix.
//
// HTTP stays at the edge. userHandler and nodeHandler are the route
// tables; each route belongs to the endpoint type of the resource it
// serves (jobsEndpoint, nodesEndpoint, ..., one per *_endpoint.go file),
// which decodes the request, calls one domain method on the Server and
// encodes the answer. Domain methods check ownership with the authz Gate
// and return fault kinds.
//
// Each file holds one concern: HTTP, the queue (queue, job, arrayJob,
// their commit), the node registry (nodeRegistry, node), scheduling (the
// snapshot builder, the cycle, the pipeline state), accounting (the usage
// ledger, the history's views) or role decisions. A file holds a concern
// when it declares its owner's types or methods or touches the owner's
// fields; calling an owner's methods is not holding it. The *Server
// methods are the controller's operations, one user-visible operation
// each (cancel: the queue's change, then the node's signal): they take
// Server.mu and call the owners' methods, and reach into the fields of
// one owner at most. TestLayout keeps it so.
//
// State lives in one bbolt file (package ctld/store) and, for speed, in
// memory. The rule everywhere: a change is on disk before anything acts on
// it or anyone is told about it, so a kill -9 at any moment loses nothing
// that was acknowledged.
//
// Jobs and array jobs belong to one type, queue: it
// loads them, gives new ones their IDs, answers references (a job, a task
// A_T, an array A) and commits every job change. Its reads for one
// purpose (a listing, the history, a wait, a dependency, a snapshot) sit
// in a queue file named for it (history.go, queuesnapshot.go, ...). How an array is stored, one pending remainder record
// for the tasks not yet started, stays with the queue and arrayJob;
// handlers see jobs, and an array's pending tasks as one job
// (arrayJob.remJob).
//
// Scheduling runs in one goroutine, woken by events (submit, job end,
// cancel, node change) and by a timer; it builds a sched.Snapshot, asks
// the Planner, and applies the Plan. No scheduling policy lives here.
//
// A job's states belong to package lifecycle: a new job's first record
// comes from lifecycle.New, every state change here is an event handed to
// lifecycle.Next, and nothing else sets a job's State (a test keeps that
// so). Domain errors carry a fault kind
// (package fault), answered with an HTTP status in one place, writeError.
//
// A submit (and a --test-only one) passes admission: ordered lists of
// small checks, mutators (defaults, account) and validators over a copy
// of the spec, reporting every problem at once; its first check is
// jobspec.Validate, the rules the CLI applies before sending.
//
// Job pipelines hook into those steps: an array's pending tasks offer
// the planner a few at a time; holds, begin times and dependencies block
// pending jobs in the snapshot (snapshotBuilder, queue.blocked); the
// pipeline type keeps the waiters of job ends, which node a requeued job
// must avoid, and the next wake time; requeue, update, long-poll waits,
// test-only submits and the accounting history are their own endpoints.
//
// A job runs on every node of its allocation: its batch part (the script)
// on the first, an extern part holding the allocation on the others; its
// end stops them all. Job steps (srun) are granted inside a running job:
// laid out by package steplayout, kept by the queue under their job, and
// ended when every node of a step reported, also after the job's end,
// which marks its running steps in its own commit (stepcommit.go).
//
// Priorities are package priority's multifactor ones, kept by package
// ctld/fairshare: it charges every run into a usage ledger that the
// controller saves in the store (usageLedger) and, after a restart,
// re-charges from the job records what ran since the last save;
// priorityEndpoint serves corral prio and corral share. The planner is
// the configuration's (sched.DefaultBackfill unless set).
//
// Locks, in the order a goroutine may take them (never an earlier one
// while it holds a later one, nor one it holds already):
//
//  1. Server.cycleMu: one scheduling cycle or test-only plan at a time;
//     it guards the snapshot builder's buffers.
//  2. Server.mu: the queue (its jobs and arrays) and the nodes; read for
//     snapshots and views, write for every commit. The queue has no lock
//     of its own: its methods run under this one, and queue.submit takes
//     it only to install what the store has already written.
//     The node registry (nodeRegistry) and the pipeline state have no
//     lock either: they run under this one too.
//  3. fairshare.State's lock: the usage ledger, taken inside package
//     fairshare only.
//
// Every other lock is a leaf, held for a few lines while nothing else is
// taken: the policy set's, the rate limiter's (package authz), the user
// name cache's, the credential nonces', and the connection limits' (a
// limitedConn's, then its connLimits'). Package ctld/internal/lockorder
// ranks the three ordered locks, and make test builds with its lockcheck
// tag, so a test that takes them out of order panics.
package ctld
