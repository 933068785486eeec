package sched

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func (b *JobBuilder) Share(s Sharing) *JobBuilder         { b.j.Sharing = s; return b }
func (b *JobBuilder) User(uid uint32) *JobBuilder         { b.j.UID = uid; return b }
func (b *RunningBuilder) Share(s Sharing) *RunningBuilder { b.r.Sharing = s; return b }
func (b *RunningBuilder) User(uid uint32) *RunningBuilder { b.r.UID = uid; return b }

func twoNodes() []Node {
	return []Node{MakeNode("n1").CPUs(4).Obj(), MakeNode("n2").CPUs(4).Obj()}
}

// --exclusive: a job that shares with nobody is never started on a node
// that runs anything, and nothing starts beside it, by every planner.
func TestExclusiveNode(t *testing.T) {
	for name, pl := range allPlanners {
		t.Run(name, func(t *testing.T) {
			busy := MakeRunning(100).On("n1", 1).Ends(time.Hour).Obj()

			// n1 runs a 1-CPU job: the exclusive job takes the idle n2.
			v := NewHarness(t, twoNodes()...).Running(busy).
				Pending(MakeJob(1).Share(ShareNone).Obj()).Plan(pl)
			v.MustStart(1, "n2")

			// Limited to the busy n1, it waits for the job there to end,
			// though 3 of n1's CPUs are free.
			v = NewHarness(t, twoNodes()...).Running(busy).
				Pending(MakeJob(1).Share(ShareNone).Only("n1").Obj()).Plan(pl)
			if _, ok := name2start(v, 1); ok {
				t.Fatalf("exclusive job started on a busy node: %s", v)
			}
			if name != "firstfit" {
				v.MustWait(1, api.ReasonResources, time.Hour)
			}

			// An exclusive job runs on n1: a 1-CPU job goes to n2, and
			// one limited to n1 waits for its end.
			excl := MakeRunning(100).On("n1", 1).Ends(time.Hour).Share(ShareNone).Obj()
			v = NewHarness(t, twoNodes()...).Running(excl).
				Pending(MakeJob(1).Obj(), MakeJob(2).Only("n1").Obj()).Plan(pl)
			v.MustStart(1, "n2")
			if _, ok := name2start(v, 2); ok {
				t.Fatalf("job started beside an exclusive one: %s", v)
			}
			if name != "firstfit" {
				v.MustWait(2, api.ReasonResources, time.Hour)
			}

			// Two exclusive jobs in one cycle never share a node: the
			// first takes n1, the second n2, the third waits.
			v = NewHarness(t, twoNodes()...).Pending(
				MakeJob(1).Prio(3).Share(ShareNone).Time(time.Hour).Obj(),
				MakeJob(2).Prio(2).Share(ShareNone).Time(time.Hour).Obj(),
				MakeJob(3).Prio(1).Share(ShareNone).Time(time.Hour).Obj()).Plan(pl)
			v.MustStart(1, "n1")
			v.MustStart(2, "n2")
			if _, ok := name2start(v, 3); ok {
				t.Fatalf("a third exclusive job started on two nodes: %s", v)
			}
			if name != "firstfit" {
				v.MustWait(3, api.ReasonResources, time.Hour)
			}

			// A plain job that started first in the cycle keeps the
			// exclusive one off its node.
			v = NewHarness(t, MakeNode("n1").CPUs(4).Obj()).Pending(
				MakeJob(1).Prio(2).Time(time.Hour).Obj(),
				MakeJob(2).Prio(1).Share(ShareNone).Time(time.Hour).Obj()).Plan(pl)
			v.MustStart(1, "n1")
			if _, ok := name2start(v, 2); ok {
				t.Fatalf("exclusive job started beside a plain one: %s", v)
			}
		})
	}
}

// --exclusive=user: the job shares its nodes with its own user's jobs
// only, both ways.
func TestExclusiveUser(t *testing.T) {
	one := func() []Node { return []Node{MakeNode("n1").CPUs(4).Obj()} }
	for name, pl := range allPlanners {
		t.Run(name, func(t *testing.T) {
			mine := MakeRunning(100).On("n1", 1).Ends(time.Hour).User(1000).Share(ShareUser).Obj()
			v := NewHarness(t, one()...).Running(mine).
				Pending(MakeJob(1).User(1000).Prio(2).Obj(), MakeJob(2).User(2000).Prio(1).Obj()).Plan(pl)
			v.MustStart(1, "n1")
			if _, ok := name2start(v, 2); ok {
				t.Fatalf("another user's job started beside a --exclusive=user job: %s", v)
			}
			if name != "firstfit" {
				v.MustWait(2, api.ReasonResources, time.Hour)
			}

			// The other way: a --exclusive=user job waits for another
			// user's plain job, and joins its own user's.
			theirs := MakeRunning(100).On("n1", 1).Ends(time.Hour).User(2000).Obj()
			v = NewHarness(t, one()...).Running(theirs).
				Pending(MakeJob(1).User(1000).Share(ShareUser).Obj()).Plan(pl)
			if _, ok := name2start(v, 1); ok {
				t.Fatalf("--exclusive=user job started beside another user's job: %s", v)
			}
			own := MakeRunning(100).On("n1", 1).Ends(time.Hour).User(1000).Obj()
			v = NewHarness(t, one()...).Running(own).
				Pending(MakeJob(1).User(1000).Share(ShareUser).Obj()).Plan(pl)
			v.MustStart(1, "n1")

			// Two users' --exclusive=user jobs in one cycle: one node each.
			v = NewHarness(t, twoNodes()...).Pending(
				MakeJob(1).User(1000).Share(ShareUser).Prio(2).Obj(),
				MakeJob(2).User(2000).Share(ShareUser).Prio(1).Obj()).Plan(pl)
			v.MustStart(1, "n1")
			v.MustStart(2, "n2")
		})
	}
}

// Backfill plans around an exclusive job's reservation: a short job fills
// the node before it, a long one that would overlap it waits until it
// ends, though CPUs would be free beside it.
func TestExclusiveReservation(t *testing.T) {
	for _, name := range []string{"conservative", "easy"} {
		t.Run(name, func(t *testing.T) {
			v := NewHarness(t, MakeNode("n1").CPUs(4).Obj()).
				Running(MakeRunning(100).On("n1", 2).Ends(time.Hour).Obj()).
				Pending(
					MakeJob(1).Prio(3).Share(ShareNone).Time(2*time.Hour).Obj(),
					MakeJob(2).Prio(2).Time(2*time.Hour).Obj(),
					MakeJob(3).Prio(1).Time(30*time.Minute).Obj()).
				Plan(allPlanners[name])
			v.MustWait(1, api.ReasonResources, time.Hour)
			v.MustStart(3, "n1")
			if _, ok := name2start(v, 2); ok {
				t.Fatalf("a job overlapping an exclusive reservation started: %s", v)
			}
			if name == "conservative" {
				v.MustWait(2, api.ReasonPriority, 3*time.Hour)
			}
		})
	}
}

// On random snapshots where some jobs share with nobody and some only with
// their user, no plan (starts and estimates, by every backfill mode) puts
// two jobs whose sharing rules each other out on one node at once, running
// jobs included.
func TestPropertySharingHolds(t *testing.T) {
	shareOf := func(id uint64) Sharing {
		switch id * 7919 % 8 {
		case 0, 1:
			return ShareNone
		case 2:
			return ShareUser
		}
		return ShareNode
	}
	type span struct {
		id       uint64
		from, to time.Time // to zero: no end
		uid      uint32
		share    Sharing
		planned  bool
	}
	overlap := func(a, b span) bool {
		return (a.to.IsZero() || b.from.Before(a.to)) && (b.to.IsZero() || a.from.Before(b.to))
	}
	forEachRandomSnapshot(t, 40, allModes, func(t *testing.T, s Snapshot, mode Mode) {
		s.Running = append([]Running(nil), s.Running...)
		for i := range s.Running {
			if s.Running[i].ID%5 == 0 {
				s.Running[i].Sharing = ShareUser
			}
		}
		s.Pending = append([]Pending(nil), s.Pending...)
		for i := range s.Pending {
			s.Pending[i].Sharing = shareOf(s.Pending[i].ID)
		}
		v := (&Harness{t: t, Snap: s}).Plan(Backfill{Mode: mode})
		on := map[string][]span{}
		for _, r := range s.Running {
			for _, a := range r.Alloc {
				on[a.Node] = append(on[a.Node], span{id: r.ID, from: s.Now, to: r.End, uid: r.UID, share: r.Sharing})
			}
		}
		byID := map[uint64]Pending{}
		for _, j := range s.Pending {
			byID[j.ID] = j
		}
		add := func(id uint64, at time.Time, nodes []string) {
			j := byID[id]
			sp := span{id: id, from: at, uid: j.UID, share: j.Sharing, planned: true}
			if d := plannedDuration(s, j); d > 0 {
				sp.to = at.Add(d)
			}
			for _, n := range nodes {
				on[n] = append(on[n], sp)
			}
		}
		for _, st := range v.Starts {
			add(st.JobID, s.Now, st.Nodes)
		}
		for _, e := range v.Pending {
			if !e.Start.IsZero() {
				add(e.JobID, e.Start, e.Nodes)
			}
		}
		for node, spans := range on {
			for i, a := range spans {
				for _, b := range spans[i+1:] {
					if (a.planned || b.planned) && overlap(a, b) && conflicts(a.uid, a.share, b.uid, b.share) {
						t.Fatalf("node %s: job %d (%+v) and job %d (%+v) overlap; plan %s", node, a.id, a, b.id, b, v)
					}
				}
			}
		}
	})
}
