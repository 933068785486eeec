package sched

// Node sharing: --exclusive keeps every other job off a job's nodes,
// --exclusive=user every other user's job. Resources alone cannot say
// that (a 1-CPU exclusive job leaves CPUs free), so each node keeps the
// spans of the jobs placed on it and a job whose sharing rules out a
// neighbour is planned only where and when none overlaps it. Nodes and
// jobs that share freely skip the check, so clusters without exclusive
// jobs plan exactly as before.

// Sharing says which other jobs may run on a job's nodes beside it.
type Sharing uint8

const (
	// ShareNode: any job may use what it leaves free (Slurm's OK).
	ShareNode Sharing = iota
	// ShareUser: only jobs of the same user (--exclusive=user).
	ShareUser
	// ShareNone: no other job (--exclusive, --mem=0, OverSubscribe=EXCLUSIVE).
	ShareNone
)

// occupant is a job's span on a node, from the plan's point of view.
type occupant struct {
	from, to int64 // [from, to); to is never for no known end
	uid      uint32
	share    Sharing
}

// conflicts says whether two jobs may not run on one node at once.
func conflicts(aUID uint32, a Sharing, bUID uint32, b Sharing) bool {
	switch {
	case a == ShareNone || b == ShareNone:
		return true
	case a == ShareUser || b == ShareUser:
		return aUID != bUID
	}
	return false
}

// occupancy is one node's occupants while a plan is built.
type occupancy struct {
	spans []occupant
	// strict counts the spans that are not ShareNode: a freely sharing
	// job needs no check on a node without any.
	strict int
}

func (o *occupancy) add(from, to int64, uid uint32, share Sharing) {
	if to <= from {
		return
	}
	o.spans = append(o.spans, occupant{from: from, to: to, uid: uid, share: share})
	if share != ShareNode {
		o.strict++
	}
}

// bound says whether r's start on this node depends on its occupants.
func (o *occupancy) bound(r *request) bool { return r.Sharing != ShareNode || o.strict > 0 }

// fitsAt says whether r may share the node with every job overlapping
// [t, t+dur).
func (o *occupancy) fitsAt(r *request, t int64) bool {
	end := satAdd(t, r.dur)
	for _, s := range o.spans {
		if s.from < end && t < s.to && conflicts(r.UID, r.Sharing, s.uid, s.share) {
			return false
		}
	}
	return true
}

// nextChange is the first span boundary after t; never if none.
func (o *occupancy) nextChange(t int64) int64 {
	next := int64(never)
	for _, s := range o.spans {
		if s.from > t {
			next = min(next, s.from)
		}
		if s.to > t {
			next = min(next, s.to)
		}
	}
	return next
}

// anyStrict says whether any job of the snapshot limits who shares its
// nodes: only then must the planner keep every node's occupants.
func anyStrict(s Snapshot) bool {
	for i := range s.Running { // by index: a long queue's jobs are not copied
		if s.Running[i].Sharing != ShareNode {
			return true
		}
	}
	for i := range s.Pending {
		if j := &s.Pending[i]; j.Sharing != ShareNode && j.Blocked == "" {
			return true
		}
	}
	return false
}

// sharingConflict says whether a job of uid with sharing share may not
// start now beside the jobs now on a node (FirstFit's check: everything
// it knows runs now).
func sharingConflict(now []occupant, uid uint32, share Sharing) bool {
	for _, s := range now {
		if conflicts(uid, share, s.uid, s.share) {
			return true
		}
	}
	return false
}
