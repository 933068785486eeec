package sched

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// T0 is "now" in every hand-made snapshot.
var T0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const GiB = int64(1) << 30

// ---- fluent builders ----

type NodeBuilder struct{ n Node }

// MakeNode starts a node: 1 CPU, 1 GiB, up.
func MakeNode(name string) *NodeBuilder {
	return &NodeBuilder{Node{Name: name, Capacity: Resources{CPUs: 1, MemBytes: GiB}, Up: true}}
}
func (b *NodeBuilder) CPUs(n int) *NodeBuilder      { b.n.Capacity.CPUs = n; return b }
func (b *NodeBuilder) Mem(bytes int64) *NodeBuilder { b.n.Capacity.MemBytes = bytes; return b }
func (b *NodeBuilder) FGPU(n int) *NodeBuilder      { b.n.Capacity.FGPU = n; return b }
func (b *NodeBuilder) Down() *NodeBuilder           { b.n.Up = false; return b }
func (b *NodeBuilder) Obj() Node                    { return b.n }

type JobBuilder struct{ j Pending }

// MakeJob starts a pending job: 1 CPU, no memory, partition "batch",
// submitted id seconds before T0, priority 0, no time limit.
func MakeJob(id uint64) *JobBuilder {
	return &JobBuilder{Pending{ID: id, Partition: "batch", PerNode: Resources{CPUs: 1},
		Submit: T0.Add(-time.Duration(1000-id) * time.Second)}}
}
func (b *JobBuilder) CPUs(n int) *JobBuilder            { b.j.PerNode.CPUs = n; return b }
func (b *JobBuilder) Mem(bytes int64) *JobBuilder       { b.j.PerNode.MemBytes = bytes; return b }
func (b *JobBuilder) FGPU(n int) *JobBuilder            { b.j.PerNode.FGPU = n; return b }
func (b *JobBuilder) Nodes(n int) *JobBuilder           { b.j.NodeCount = n; return b }
func (b *JobBuilder) Time(d time.Duration) *JobBuilder  { b.j.TimeLimit = d; return b }
func (b *JobBuilder) Prio(p int64) *JobBuilder          { b.j.Priority = p; return b }
func (b *JobBuilder) Part(name string) *JobBuilder      { b.j.Partition = name; return b }
func (b *JobBuilder) Blocked(r api.Reason) *JobBuilder  { b.j.Blocked = r; return b }
func (b *JobBuilder) Submitted(t time.Time) *JobBuilder { b.j.Submit = t; return b }
func (b *JobBuilder) Obj() Pending                      { return b.j }

// Allowed limits the job to these nodes.
func (b *JobBuilder) Allowed(set map[string]bool) *JobBuilder { b.j.Allowed = set; return b }

// Only limits the job to the named nodes.
func (b *JobBuilder) Only(names ...string) *JobBuilder {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return b.Allowed(set)
}

type RunningBuilder struct{ r Running }

// MakeRunning starts a running job with no allocation and an unknown end.
func MakeRunning(id uint64) *RunningBuilder { return &RunningBuilder{Running{ID: id}} }
func (b *RunningBuilder) On(node string, cpus int) *RunningBuilder {
	b.r.Alloc = append(b.r.Alloc, Allocation{Node: node, Resources: Resources{CPUs: cpus}})
	return b
}
func (b *RunningBuilder) OnRes(node string, res Resources) *RunningBuilder {
	b.r.Alloc = append(b.r.Alloc, Allocation{Node: node, Resources: res})
	return b
}

// Ends sets the expected end relative to T0.
func (b *RunningBuilder) Ends(d time.Duration) *RunningBuilder { b.r.End = T0.Add(d); return b }
func (b *RunningBuilder) Obj() Running                         { return b.r }

// ---- harness ----

// Harness builds a snapshot and checks plans against it.
type Harness struct {
	t    testing.TB
	Snap Snapshot
}

// NewHarness returns a harness whose snapshot has the given nodes and one
// partition "batch" holding all of them (replace it with Partitions).
func NewHarness(t testing.TB, nodes ...Node) *Harness {
	h := &Harness{t: t, Snap: Snapshot{Now: T0, Nodes: nodes}}
	all := make([]string, len(nodes))
	for i, n := range nodes {
		all[i] = n.Name
	}
	h.Snap.Partitions = []Partition{{Name: "batch", Nodes: all}}
	return h
}

func (h *Harness) Partitions(ps ...Partition) *Harness { h.Snap.Partitions = ps; return h }
func (h *Harness) Running(rs ...Running) *Harness {
	h.Snap.Running = append(h.Snap.Running, rs...)
	return h
}
func (h *Harness) Pending(js ...Pending) *Harness {
	h.Snap.Pending = append(h.Snap.Pending, js...)
	return h
}

// Plan runs the planner and checks the invariants every plan must keep.
func (h *Harness) Plan(pl Planner) *PlanView {
	h.t.Helper()
	plan := pl.Plan(h.Snap)
	MustNotOvercommit(h.t, h.Snap, plan)
	MustKeepDeviceRules(h.t, h.Snap, plan)
	return &PlanView{t: h.t, Plan: plan}
}

// PlanView answers questions about one plan.
type PlanView struct {
	t testing.TB
	Plan
}

// MustStart fails unless job id starts now (on exactly these nodes, if given).
func (v *PlanView) MustStart(id uint64, nodes ...string) {
	v.t.Helper()
	for _, s := range v.Starts {
		if s.JobID == id {
			if len(nodes) > 0 && fmt.Sprint(s.Nodes) != fmt.Sprint(nodes) {
				v.t.Fatalf("job %d starts on %v, want %v", id, s.Nodes, nodes)
			}
			return
		}
	}
	v.t.Fatalf("job %d does not start now; plan: %s", id, v)
}

// MustNotStart fails if job id starts now.
func (v *PlanView) MustNotStart(id uint64) {
	v.t.Helper()
	for _, s := range v.Starts {
		if s.JobID == id {
			v.t.Fatalf("job %d starts now; plan: %s", id, v)
		}
	}
}

// MustWait fails unless job id waits with this reason and a planned start
// at T0+at (at < 0: no planned start).
func (v *PlanView) MustWait(id uint64, reason api.Reason, at time.Duration) Estimate {
	v.t.Helper()
	for _, e := range v.Pending {
		if e.JobID != id {
			continue
		}
		if e.Reason != reason {
			v.t.Fatalf("job %d reason %s, want %s; plan: %s", id, e.Reason, reason, v)
		}
		switch {
		case at < 0 && !e.Start.IsZero():
			v.t.Fatalf("job %d planned at %v, want no estimate", id, e.Start.Sub(T0))
		case at >= 0 && !e.Start.Equal(T0.Add(at)):
			v.t.Fatalf("job %d planned at %v, want %v; plan: %s", id, e.Start.Sub(T0), at, v)
		}
		return e
	}
	v.t.Fatalf("job %d is not pending in the plan: %s", id, v)
	return Estimate{}
}

func (v *PlanView) String() string {
	s := "starts:"
	for _, st := range v.Starts {
		s += fmt.Sprintf(" %d%v", st.JobID, st.Nodes)
	}
	s += " pending:"
	for _, e := range v.Pending {
		at := "-"
		if !e.Start.IsZero() {
			at = e.Start.Sub(T0).String()
		}
		s += fmt.Sprintf(" %d(%s@%s%v)", e.JobID, e.Reason, at, e.Nodes)
	}
	return s
}

// plannedDuration mirrors the planner's rule: limit, else partition
// default, else partition maximum, else unlimited (0 here).
func plannedDuration(s Snapshot, j Pending) time.Duration {
	if j.TimeLimit > 0 {
		return j.TimeLimit
	}
	for _, p := range s.Partitions {
		if p.Name == j.Partition {
			if p.DefaultTime > 0 {
				return p.DefaultTime
			}
			return p.MaxTime
		}
	}
	return 0
}

// MustNotOvercommit checks that running jobs, starts and every planned
// start together never exceed any node's capacity at any time.
func MustNotOvercommit(t testing.TB, s Snapshot, plan Plan) {
	t.Helper()
	type ev struct {
		at  time.Time // zero time = forever, sorts last
		add bool
		res Resources
	}
	evs := map[string][]ev{}
	hold := func(node string, res Resources, from time.Time, dur time.Duration, forever bool) {
		evs[node] = append(evs[node], ev{at: from, add: true, res: res})
		if !forever {
			evs[node] = append(evs[node], ev{at: from.Add(dur), res: res})
		}
	}
	for _, r := range s.Running {
		for _, a := range r.Alloc {
			end := r.End
			if !end.IsZero() && !end.After(s.Now) {
				end = s.Now.Add(1)
			}
			hold(a.Node, a.Resources, s.Now, end.Sub(s.Now), r.End.IsZero())
		}
	}
	jobs := map[uint64]Pending{}
	for _, j := range s.Pending {
		jobs[j.ID] = j
	}
	hasDevices := map[string]bool{}
	for _, n := range s.Nodes {
		hasDevices[n.Name] = len(n.GPUs) > 0
	}
	place := func(id uint64, at time.Time, nodes []string) {
		j, ok := jobs[id]
		if !ok {
			t.Fatalf("plan names job %d that is not pending", id)
		}
		if want := max(j.NodeCount, 1); len(nodes) != want {
			t.Fatalf("job %d placed on %d nodes, wants %d", id, len(nodes), want)
		}
		d := plannedDuration(s, j)
		for _, n := range nodes {
			if !j.allows(n) {
				t.Fatalf("job %d placed on %s, which it does not allow (%v)", id, n, j.Allowed)
			}
			res := j.PerNode
			if !hasDevices[n] { // a pool: whole GPUs take one fGPU each
				res.FGPU += int(gpu.GPUs(j.GPUs, gpu.DefaultPerGPU))
			}
			hold(n, res, at, d, d == 0)
		}
	}
	for _, st := range plan.Starts {
		place(st.JobID, s.Now, st.Nodes)
	}
	for _, e := range plan.Pending {
		if !e.Start.IsZero() {
			if e.Start.Before(s.Now) {
				t.Fatalf("job %d planned in the past", e.JobID)
			}
			place(e.JobID, e.Start, e.Nodes)
		}
	}
	capOf := map[string]Resources{}
	for _, n := range s.Nodes {
		capOf[n.Name] = n.Capacity
	}
	for node, list := range evs {
		sort.SliceStable(list, func(a, b int) bool {
			x, y := list[a], list[b]
			if !x.at.Equal(y.at) {
				return x.at.Before(y.at)
			}
			return !x.add && y.add // releases before acquisitions at the same instant
		})
		var used Resources
		for _, e := range list {
			if e.add {
				used = used.Add(e.res)
				if !used.Fits(capOf[node]) {
					t.Fatalf("node %s overcommitted at %v: %+v > %+v", node, e.at.Sub(s.Now), used, capOf[node])
				}
			} else {
				used = used.Sub(e.res)
			}
		}
	}
}
