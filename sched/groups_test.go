package sched

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Builders for group limits.
func (b *JobBuilder) Group(name string, use int64) *JobBuilder {
	b.j.Groups = append(b.j.Groups, Member{Group: name, Use: use})
	return b
}
func (b *RunningBuilder) Group(name string, use int64) *RunningBuilder {
	b.r.Groups = append(b.r.Groups, Member{Group: name, Use: use})
	return b
}
func (h *Harness) Limit(group string, max int64, reason api.Reason) *Harness {
	if h.Snap.GroupLimits == nil {
		h.Snap.GroupLimits = map[string]GroupLimit{}
	}
	h.Snap.GroupLimits[group] = GroupLimit{Max: max, Reason: reason}
	return h
}

// allPlanners are every planner, named for subtests.
var allPlanners = map[string]Planner{
	"conservative": Backfill{Mode: Conservative}, "easy": Backfill{Mode: EASY},
	"fcfs": Backfill{Mode: FCFS}, "firstfit": FirstFit{},
}

func TestGroupLimits(t *testing.T) {
	type want struct {
		start  []uint64
		reason map[uint64]api.Reason // jobs held by a group: no estimate
	}
	cases := []struct {
		name string
		h    func(t *testing.T) *Harness
		want want
	}{{
		// %2 of an array: two of four tasks start though all would fit.
		name: "at most Max members start",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).Limit("a", 2, api.ReasonJobArrayTaskLimit).Pending(
				MakeJob(1).Group("a", 1).Obj(), MakeJob(2).Group("a", 1).Obj(),
				MakeJob(3).Group("a", 1).Obj(), MakeJob(4).Group("a", 1).Obj(), MakeJob(5).Obj())
		},
		want: want{start: []uint64{1, 2, 5}, reason: map[uint64]api.Reason{3: api.ReasonJobArrayTaskLimit, 4: api.ReasonJobArrayTaskLimit}},
	}, {
		// A singleton: a job of the name runs, so the pending one waits.
		name: "running members count",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).Limit("s", 1, api.ReasonDependency).
				Running(MakeRunning(100).On("n1", 1).Group("s", 1).Ends(time.Hour).Obj()).
				Pending(MakeJob(1).Group("s", 1).Obj(), MakeJob(2).Obj())
		},
		want: want{start: []uint64{2}, reason: map[uint64]api.Reason{1: api.ReasonDependency}},
	}, {
		// A policy's CPU limit: members count their CPUs.
		name: "members count their use",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(16).Obj()).Limit("cpus", 6, api.ReasonPolicyMaxCPUs).
				Running(MakeRunning(100).On("n1", 2).Group("cpus", 2).Ends(time.Hour).Obj()).
				Pending(MakeJob(1).CPUs(3).Group("cpus", 3).Prio(3).Obj(),
					MakeJob(2).CPUs(2).Group("cpus", 2).Prio(2).Obj(),
					MakeJob(3).CPUs(1).Group("cpus", 1).Prio(1).Obj())
		},
		want: want{start: []uint64{1, 3}, reason: map[uint64]api.Reason{2: api.ReasonPolicyMaxCPUs}},
	}, {
		// A job over a limit on its own waits for an admin to raise it.
		name: "a job over the limit alone never starts",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(16).Obj()).Limit("cpus", 2, api.ReasonPolicyMaxCPUs).
				Pending(MakeJob(1).CPUs(4).Group("cpus", 4).Obj())
		},
		want: want{reason: map[uint64]api.Reason{1: api.ReasonPolicyMaxCPUs}},
	}, {
		// The first group in the job's list that is full names the reason.
		name: "the first full group gives the reason",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).
				Limit("jobs", 1, api.ReasonPolicyMaxRunningJobs).Limit("cpus", 1, api.ReasonPolicyMaxCPUs).
				Running(MakeRunning(100).On("n1", 1).Group("jobs", 1).Group("cpus", 1).Ends(time.Hour).Obj()).
				Pending(MakeJob(1).Group("jobs", 1).Group("cpus", 1).Obj(), MakeJob(2).Group("cpus", 1).Group("jobs", 1).Obj())
		},
		want: want{reason: map[uint64]api.Reason{1: api.ReasonPolicyMaxRunningJobs, 2: api.ReasonPolicyMaxCPUs}},
	}, {
		// A held job reserves nothing: the smaller job behind it starts
		// on the node it would otherwise wait for.
		name: "a held member reserves nothing",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(2).Obj()).Limit("a", 1, api.ReasonJobArrayTaskLimit).
				Running(MakeRunning(100).On("n1", 1).Group("a", 1).Ends(time.Hour).Obj()).
				Pending(MakeJob(1).CPUs(2).Group("a", 1).Prio(9).Obj(), MakeJob(2).Time(2*time.Hour).Obj())
		},
		want: want{start: []uint64{2}, reason: map[uint64]api.Reason{1: api.ReasonJobArrayTaskLimit}},
	}, {
		// Groups without a limit, and a limit no job names, change nothing;
		// a blocked job keeps its own reason.
		name: "unlimited groups and blocked members",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).Limit("other", 0, "X").
				Pending(MakeJob(1).Group("free", 5).Obj(), MakeJob(2).Group("free", 5).Obj(),
					MakeJob(3).Blocked(api.ReasonJobHeld).Group("other", 1).Obj())
		},
		want: want{start: []uint64{1, 2}, reason: map[uint64]api.Reason{3: api.ReasonJobHeld}},
	}, {
		name: "an empty reason is GroupLimit",
		h: func(t *testing.T) *Harness {
			return NewHarness(t, MakeNode("n1").CPUs(8).Obj()).Limit("g", 1, "").
				Pending(MakeJob(1).Group("g", 1).Obj(), MakeJob(2).Group("g", 1).Obj())
		},
		want: want{start: []uint64{1}, reason: map[uint64]api.Reason{2: reasonGroupLimit}},
	}}
	for _, c := range cases {
		for name, pl := range allPlanners {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				v := c.h(t).Plan(pl)
				var got []uint64
				for _, st := range v.Starts {
					got = append(got, st.JobID)
				}
				if fmt.Sprint(sortedIDs(got)) != fmt.Sprint(c.want.start) {
					t.Fatalf("started %v, want %v; plan %s", sortedIDs(got), c.want.start, v)
				}
				for id, r := range c.want.reason {
					v.MustWait(id, r, -1)
				}
			})
		}
	}
}

func sortedIDs(ids []uint64) []uint64 {
	out := append([]uint64(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// withGroups puts a random snapshot's jobs into a few limited groups
// (each with a reason of its own, so a reason names its group); some
// running jobs are members too, some groups already past their limit.
func withGroups(rng *rand.Rand, s Snapshot) Snapshot {
	n := 1 + rng.Intn(4)
	s.GroupLimits = map[string]GroupLimit{}
	for g := 0; g < n; g++ {
		name := fmt.Sprintf("g%d", g)
		s.GroupLimits[name] = GroupLimit{Max: int64(rng.Intn(6)), Reason: api.Reason("Group" + name)}
	}
	join := func() []Member {
		var out []Member
		for g := 0; g < n; g++ {
			if rng.Intn(3) == 0 {
				out = append(out, Member{Group: fmt.Sprintf("g%d", g), Use: int64(1 + rng.Intn(2))})
			}
		}
		return out
	}
	s.Running = append([]Running(nil), s.Running...)
	for i := range s.Running {
		if rng.Intn(3) == 0 {
			s.Running[i].Groups = join()
		}
	}
	s.Pending = append([]Pending(nil), s.Pending...)
	for i := range s.Pending {
		s.Pending[i].Groups = join()
	}
	return s
}

// Every planner keeps every group within its limit (or starts no member
// of a group already past it), and a job held by a group is a member
// that could not have joined it, with no estimate.
func TestPropertyGroupLimitsHold(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for round := 0; round < 60; round++ {
		s := withGroups(rng, randomSnapshot(rng, 3+rng.Intn(12), rng.Intn(30), 5+rng.Intn(60)))
		for name, pl := range allPlanners {
			t.Run(fmt.Sprintf("%d/%s", round, name), func(t *testing.T) {
				h := &Harness{t: t, Snap: s}
				v := h.Plan(pl) // checks overcommit
				running, used := map[string]int64{}, map[string]int64{}
				for _, r := range s.Running {
					for _, m := range r.Groups {
						running[m.Group] += m.Use
					}
				}
				byID := map[uint64]Pending{}
				for _, j := range s.Pending {
					byID[j.ID] = j
				}
				started := map[string]bool{}
				for _, st := range v.Starts {
					for _, m := range byID[st.JobID].Groups {
						used[m.Group] += m.Use
						started[m.Group] = true
					}
				}
				for g, l := range s.GroupLimits {
					if started[g] && running[g]+used[g] > l.Max {
						t.Fatalf("group %s: %d running and %d started, limit %d; plan %s", g, running[g], used[g], l.Max, v)
					}
				}
				for _, e := range v.Pending {
					j := byID[e.JobID]
					for _, m := range j.Groups {
						if e.Reason != s.GroupLimits[m.Group].Reason {
							continue
						}
						if j.Blocked != "" || !e.Start.IsZero() || running[m.Group]+used[m.Group]+m.Use <= s.GroupLimits[m.Group].Max {
							t.Fatalf("job %d held by %s with room in it (or blocked, or with an estimate); plan %s", j.ID, m.Group, v)
						}
					}
				}
				// The same input again gives the same plan.
				if w := pl.Plan(s); !reflect.DeepEqual(w, v.Plan) {
					t.Fatalf("plans differ for identical input")
				}
			})
		}
	}
}
