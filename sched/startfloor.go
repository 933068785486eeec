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
	recent [8]struct {
		r     *request
		start int64
	}
	next int
}

// of is the earliest r can start: the latest start of a remembered
// request that r dominates, 0 if none.
func (f *startFloor) of(r *request) int64 {
	from := int64(0)
	for _, m := range f.recent {
		if m.r != nil && m.start > from && r.dominates(m.r) {
			from = m.start
		}
	}
	return from
}

// add remembers r's start (never if it can never run).
func (f *startFloor) add(r *request, start int64) {
	if r.count > 1 || len(r.part.ix.nodes) != 1 {
		return
	}
	f.recent[f.next].r, f.recent[f.next].start = r, start
	f.next = (f.next + 1) % len(f.recent)
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
