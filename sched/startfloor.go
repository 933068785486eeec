package sched

// startFloor lets a conservative plan begin a job's search where an
// earlier, easier job's search ended. Within one conservative plan the
// profile only fills, so a window too small for a request is too small
// for any request that needs at least as much for at least as long: such
// a request starts no earlier than the easier one's reservation. Long
// queues repeat themselves (an array's tasks, one user's runs), and the
// search of a deep queue on the simulator's one large node otherwise
// walks the whole busy stretch before every late reservation.
//
// Only partitions of one node use it: there a request's start fixes its
// node. Where several nodes tie, a later floor could change which tie a
// search meets first, and so the node a job is planned on.
type startFloor struct {
	last  *request // the previous one-node request placed; nil: none yet
	start int64    // its start, never if it can never run
}

// of is the earliest r can start: the previous request's start if r
// dominates it, else 0. Remembering the last eight instead made no
// replay of RICC's deep queues faster (measured).
func (f *startFloor) of(r *request) int64 {
	if f.last != nil && r.dominates(f.last) {
		return f.start
	}
	return 0
}

// add remembers r's start (never if it can never run).
func (f *startFloor) add(r *request, start int64) {
	if r.count > 1 || len(r.part.ix.nodes) != 1 {
		return
	}
	f.last, f.start = r, start
}

// dominates reports whether r is at least as hard to place as q, a
// one-node request on a one-node partition (add keeps no other): the
// same partition, devices and neighbours, at least q's CPUs and memory,
// for at least as long. GPU amounts must be equal: packing shares onto
// devices is not monotone in the amount.
func (r *request) dominates(q *request) bool {
	return r.dur >= q.dur && r.need.CPUs >= q.need.CPUs && r.need.MemBytes >= q.need.MemBytes &&
		r.part == q.part && r.count <= 1 && r.need.FGPU == q.need.FGPU && r.GPUs == q.GPUs &&
		r.GPUType == q.GPUType && r.UID == q.UID && r.Sharing == q.Sharing && r.Allowed == nil && q.Allowed == nil
}
