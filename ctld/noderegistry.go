package ctld

import (
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/priority"
)

// nodeRegistry is every node the controller knows, up or not, with what
// it keeps about each: the stored record (address, capacity, drain and
// down), whether it is up and why not, when it was last heard from, how
// long a failed launch keeps it down, and what it last said it runs. It
// is guarded by Server.mu, as the queue is: read for lookups, write for
// anything that changes it.
//
// It holds node state only. What also touches jobs (registration's
// reconciling, ending the runs of a silent or downed node) stays on the
// Server and calls in here, so that the registry never reaches the queue
// and the queue never reaches it.
type nodeRegistry struct {
	byName map[string]*node
	// names are byName's keys in hostlist order, kept as nodes are put
	// (nodes are never removed), so a cycle need not sort them.
	names []string
}

func newNodeRegistry() *nodeRegistry {
	return &nodeRegistry{byName: make(map[string]*node)}
}

// node is the in-memory view of one node.
type node struct {
	rec    store.NodeRecord
	up     bool
	reason string // why DOWN
	// seen is the last heartbeat, or the controller's start for nodes
	// loaded from the store: they get a full timeout to re-register.
	seen time.Time
	// persistedSeen is rec.LastSeen as last written; heartbeats refresh it
	// on disk only now and then.
	persistedSeen time.Time
	// holdUntil: after a failed launch the node stays DOWN until then.
	holdUntil time.Time
	client    *api.NodeClient
	parts     []string // partitions naming this node
	// reported is what its latest registration listed as running: a
	// requeued job is not started again on a node that still has it.
	reported []uint64
	gpus     []gpu.Device // rec.GPUs, converted once
}

const reasonNotResponding = api.NodeNotResponding

// persistSeenEvery: a heartbeat rewrites the node's record only this often
// (plus on any change), so a big cluster's heartbeats are not all fsyncs.
const persistSeenEvery = time.Minute

// get is the node of this name, nil if none is known.
func (r *nodeRegistry) get(name string) *node { return r.byName[name] }

// put adds n under name, replacing any node of that name.
func (r *nodeRegistry) put(name string, n *node) {
	if _, known := r.byName[name]; !known {
		i, _ := slices.BinarySearchFunc(r.names, name, hostlist.Compare)
		r.names = slices.Insert(r.names, i, name)
	}
	r.byName[name] = n
}

// all yields every known node, up or not, in no particular order.
func (r *nodeRegistry) all() iter.Seq2[string, *node] { return maps.All(r.byName) }

func (r *nodeRegistry) count() int { return len(r.byName) }

// load adds the nodes of stored records. They start DOWN, not responding,
// with a full timeout from now to register again.
func (r *nodeRegistry) load(recs []store.NodeRecord, now time.Time, parts partitions, client func(addr string) *api.NodeClient) {
	for _, rec := range recs {
		r.put(rec.Name, &node{rec: rec, reason: reasonNotResponding, seen: now,
			persistedSeen: rec.LastSeen, client: client(rec.Addr), parts: parts.of(rec.Name),
			gpus: gpu.DevicesFromAPI(rec.GPUs)})
	}
}

// isUp: the node is known and up.
func (r *nodeRegistry) isUp(name string) bool {
	n := r.byName[name]
	return n != nil && n.up
}

// inPartition lists the known nodes of a partition, in no particular
// order (validation needs no order; sortNodes gives the natural one).
func (r *nodeRegistry) inPartition(parts partitions, part string) []*node {
	var out []*node
	for name, n := range r.byName {
		if parts.contains(part, name) {
			out = append(out, n)
		}
	}
	return out
}

// size is what the priority size factor measures jobs against: every
// known node, up or not, so priorities do not jump when a node flaps.
func (r *nodeRegistry) size() priority.Cluster {
	var cl priority.Cluster
	for _, n := range r.byName {
		cl.Nodes++
		cl.CPUs += n.rec.CPUs
	}
	return cl
}

// markDown takes a node out of scheduling until now+hold after it failed
// a launch for a fault of its own; never for a job's (launchFailedLocked).
func (r *nodeRegistry) markDown(name, reason string, now time.Time, hold time.Duration) {
	n := r.byName[name]
	if n == nil {
		return
	}
	n.up, n.reason = false, reason
	n.holdUntil = now.Add(hold)
}

// oldRunMayLive: a requeued job's earlier run on node may still be
// going. A node that is DOWN has not told us otherwise; a node that is up
// but still lists the job has been told to kill it (reconcileLocked) and
// not yet confirmed. A node the controller no longer knows cannot run it,
// nor one an administrator set DOWN (corral down): that declares its runs
// gone.
func (r *nodeRegistry) oldRunMayLive(id uint64, name string) bool {
	n := r.byName[name]
	return n != nil && !n.rec.Down && (!n.up || containsID(n.reported, id))
}

// markSilent sets DOWN every up node not heard from within timeout of
// now. down lists the nodes it changed; silent holds every node past the
// timeout, changed or not, whose runs are to be given up.
func (r *nodeRegistry) markSilent(now time.Time, timeout time.Duration) (down []string, silent map[string]bool) {
	silent = make(map[string]bool)
	for name, n := range r.byName {
		if now.Sub(n.seen) <= timeout {
			continue
		}
		silent[name] = true
		if n.up || n.reason != reasonNotResponding {
			n.up, n.reason = false, reasonNotResponding
			down = append(down, name)
		}
	}
	return down, silent
}

// mustPersist readies a registration's record: it keeps the drain or
// down an administrator set (they outlive registrations), and says
// whether the record must be on disk before the node is used: it is new,
// changed, about to come up, or its last-seen time is stale on disk.
func (r *nodeRegistry) mustPersist(rec *store.NodeRecord, now time.Time) bool {
	old := r.get(rec.Name)
	if old != nil {
		rec.Drain, rec.DrainedSince, rec.Down = old.rec.Drain, old.rec.DrainedSince, old.rec.Down
	}
	return old == nil || old.rec.Addr != rec.Addr || old.rec.CPUs != rec.CPUs ||
		old.rec.MemBytes != rec.MemBytes || old.rec.BootID != rec.BootID || gpusChanged(&old.rec, rec) ||
		!slices.Equal(old.rec.MountRoots, rec.MountRoots) ||
		(!old.up && !now.Before(old.holdUntil) && !old.rec.Down) || now.Sub(old.persistedSeen) > persistSeenEvery
}

// heard readies the node of a registration's record (from mustPersist,
// written if persist) for registered, adding it if it is new. The node's
// own record is not replaced yet. rewrite: an administrator drained,
// downed or resumed it since mustPersist; rec now has that too and must
// be written again, so that the disk has it last.
func (r *nodeRegistry) heard(rec *store.NodeRecord, parts partitions, client func(addr string) *api.NodeClient, persist bool, now time.Time) (n *node, rebooted, capChanged, rewrite bool) {
	n = r.get(rec.Name)
	if n == nil {
		n = &node{parts: parts.of(rec.Name)}
		r.put(rec.Name, n)
	}
	if n.client == nil || n.rec.Addr != rec.Addr {
		n.client = client(rec.Addr)
	}
	if persist {
		n.persistedSeen = now
	}
	rebooted = n.rec.BootID != "" && n.rec.BootID != rec.BootID
	capChanged = n.rec.CPUs != rec.CPUs || n.rec.MemBytes != rec.MemBytes || gpusChanged(&n.rec, rec)
	if capChanged || n.gpus == nil && len(rec.GPUs) > 0 {
		n.gpus = gpu.DevicesFromAPI(rec.GPUs)
	}
	if rec.Drain != n.rec.Drain || !rec.DrainedSince.Equal(n.rec.DrainedSince) || rec.Down != n.rec.Down {
		rec.Drain, rec.DrainedSince, rec.Down = n.rec.Drain, n.rec.DrainedSince, n.rec.Down
		rewrite = true
	}
	return n, rebooted, capChanged, rewrite
}

// registered installs a registration's record, once on disk, with the
// jobs the node runs, and brings the node up unless a failed launch's
// hold or an administrator's down keeps it DOWN.
func (r *nodeRegistry) registered(n *node, rec store.NodeRecord, running []uint64, now time.Time) (cameUp bool) {
	n.rec, n.seen, n.reported = rec, now, running
	if !n.up && !now.Before(n.holdUntil) && !n.rec.Down {
		n.up, n.reason = true, ""
		return true
	}
	return false
}

// restartClocks gives every node that is not up a full timeout from now
// to register again, as when the controller starts serving.
func (r *nodeRegistry) restartClocks(now time.Time) {
	for _, n := range r.byName {
		if !n.up {
			n.seen = now
		}
	}
}

// upClients lists the nodes that are up (or the named ones, which
// must exist) with a client whose timeout suits image work.
func (r *nodeRegistry) upClients(names []string, timeout time.Duration) (map[string]*api.NodeClient, error) {
	out := map[string]*api.NodeClient{}
	if len(names) == 0 {
		for name, n := range r.all() {
			if n.up && n.client != nil {
				out[name] = n.client.WithTimeout(timeout) // same transport: TLS pinned to the CA
			}
		}
		return out, nil
	}
	for _, name := range names {
		n := r.get(name)
		if n == nil || n.client == nil {
			return nil, fault.Errorf(fault.Invalid, "node %s does not exist", name)
		}
		if !n.up {
			return nil, fault.Errorf(fault.Conflict, "node %s is down", name)
		}
		out[name] = n.client.WithTimeout(timeout)
	}
	return out, nil
}

// client is the named node's client; nil for a node not known.
func (r *nodeRegistry) client(name string) *api.NodeClient {
	if n := r.byName[name]; n != nil {
		return n.client
	}
	return nil
}

// liveClient is node name's client while the node is up, else nil.
func (r *nodeRegistry) liveClient(name string) *api.NodeClient {
	if !r.isUp(name) {
		return nil
	}
	return r.client(name)
}

// signalOrder is the order to signal job id on node name, which is known.
func (r *nodeRegistry) signalOrder(id uint64, name string) signalOrder {
	return signalOrder{id: id, node: name, client: r.byName[name].client}
}

// reports reports whether node name's latest registration listed job id.
func (r *nodeRegistry) reports(name string, id uint64) bool {
	n := r.byName[name]
	return n != nil && containsID(n.reported, id)
}
