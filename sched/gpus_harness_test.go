package sched

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/corral-hpc/corral/gpu"
)

// ---- devices ----

const a100Bytes = 40960 * gpu.MiB

// mockA100 is an A100-40GB as NVML (and go-nvml's dgxa100 mock) reports
// it; with mig, in MIG mode with its plain profiles.
func mockA100(index int, mig bool) gpu.Device {
	d := gpu.Device{Index: index, Minor: index, UUID: fmt.Sprintf("GPU-a100-%d", index),
		Name: "NVIDIA A100-SXM4-40GB", MemoryBytes: a100Bytes, SMs: 108, MIGCapable: true}
	if !mig {
		return d
	}
	d.MIGEnabled, d.MIGSlices = true, 7
	for _, p := range []struct {
		id, slices int
		mib        int64
		max        int
	}{{0, 1, 4864, 7}, {1, 2, 9856, 3}, {2, 3, 19968, 2}, {3, 4, 19968, 1}, {4, 7, 40192, 1}} {
		e := gpu.MIGMemEighths(p.mib*gpu.MiB, a100Bytes)
		d.MIG = append(d.MIG, gpu.MIGProfile{ID: p.id, Name: gpu.MIGName(p.slices, e, a100Bytes, ""),
			Slices: p.slices, SMs: 14 * p.slices, MemoryBytes: p.mib * gpu.MiB, MemEighths: e, Max: p.max, Free: p.max})
	}
	return d
}

// mockH100 is an H100 80GB (MIG off).
func mockH100(index int) gpu.Device {
	return gpu.Device{Index: index, Minor: index, UUID: fmt.Sprintf("GPU-h100-%d", index),
		Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 * gpu.GiB, SMs: 132}
}

// a100s is n plain A100s.
func a100s(n int) []gpu.Device {
	out := make([]gpu.Device, n)
	for i := range out {
		out[i] = mockA100(i, false)
	}
	return out
}

// GPUs gives the node devices worth perGPU each (and the matching FGPU
// capacity, as the controller sets it).
func (b *NodeBuilder) GPUs(perGPU gpu.Hundredths, devs ...gpu.Device) *NodeBuilder {
	b.n.GPUs, b.n.FGPUPerGPU = devs, perGPU
	b.n.Capacity.FGPU = int(gpu.NodeCapacity(devs, perGPU))
	return b
}

func (b *JobBuilder) WholeGPUs(n int) *JobBuilder        { b.j.GPUs = n; return b }
func (b *JobBuilder) GPUType(t string) *JobBuilder       { b.j.GPUType = t; return b }
func (b *JobBuilder) UID(uid uint32) *JobBuilder         { b.j.UID = uid; return b }
func (b *RunningBuilder) UID(uid uint32) *RunningBuilder { b.r.UID = uid; return b }

// OnShares holds shares of node's devices (and their fGPU).
func (b *RunningBuilder) OnShares(node string, cpus int, shares ...gpu.Share) *RunningBuilder {
	b.r.Alloc = append(b.r.Alloc, Allocation{Node: node, Resources: Resources{CPUs: cpus, FGPU: int(gpu.Total(shares))}, GPUs: shares})
	return b
}

// amountsOf renders one node's shares as "device:amount" (as gpu's tests do).
func amountsOf(shares []gpu.Share) string {
	s := ""
	for i, sh := range shares {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%s", sh.Device, sh.Amount)
		if sh.MIG != nil {
			s += "(" + sh.MIG.Name + ")"
		}
	}
	return s
}

// MustStartOnDevices fails unless job id starts now on node with these
// shares ("0:0.5 1:1").
func (v *PlanView) MustStartOnDevices(id uint64, node, shares string) {
	v.t.Helper()
	for _, s := range v.Starts {
		if s.JobID != id {
			continue
		}
		for i, n := range s.Nodes {
			if n == node && i < len(s.GPUs) && amountsOf(s.GPUs[i]) == shares {
				return
			}
		}
		v.t.Fatalf("job %d starts on %v with shares %v, want %s on %s", id, s.Nodes, s.GPUs, shares, node)
	}
	v.t.Fatalf("job %d does not start now; plan: %s", id, v)
}

// ---- the device invariants ----

// perGPUOf is a node's worth per device.
func perGPUOf(n Node) gpu.Hundredths {
	if n.FGPUPerGPU == 0 {
		return gpu.DefaultPerGPU
	}
	return n.FGPUPerGPU
}

// MustKeepDeviceRules checks every start and planned start against the
// devices of its nodes: each GPU job on a node with devices has shares
// there that follow the packing rule (enough in total; at most one
// fraction; a request of at most one device's worth on one device; only
// devices of its type), and over time no device holds more than its worth
// and no two users' MPS fractions share a device.
func MustKeepDeviceRules(t testing.TB, s Snapshot, plan Plan) {
	t.Helper()
	nodes := map[string]Node{}
	for _, n := range s.Nodes {
		nodes[n.Name] = n
	}
	jobs := map[uint64]Pending{}
	for _, j := range s.Pending {
		jobs[j.ID] = j
	}
	type ev struct {
		at     time.Time // zero: forever (sorts last)
		add    bool
		amount gpu.Hundredths
		uid    uint32
		mps    bool
	}
	type devKey struct {
		node string
		dev  int
	}
	evs := map[devKey][]ev{}
	hold := func(node string, sh gpu.Share, uid uint32, from time.Time, d time.Duration, forever bool) {
		n := nodes[node]
		dev, ok := gpu.Lookup(n.GPUs, sh.Device)
		if !ok {
			t.Fatalf("share on device %d that node %s does not have", sh.Device, node)
		}
		k := devKey{node, sh.Device}
		mps := isMPS(dev, sh.Amount, perGPUOf(n))
		evs[k] = append(evs[k], ev{at: from, add: true, amount: sh.Amount, uid: uid, mps: mps})
		if !forever {
			evs[k] = append(evs[k], ev{at: from.Add(d), amount: sh.Amount, uid: uid, mps: mps})
		}
	}
	for _, r := range s.Running {
		end := r.End
		if !end.IsZero() && !end.After(s.Now) {
			end = s.Now.Add(1)
		}
		for _, a := range r.Alloc {
			for _, sh := range a.GPUs {
				hold(a.Node, sh, r.UID, s.Now, end.Sub(s.Now), r.End.IsZero())
			}
		}
	}
	place := func(id uint64, at time.Time, names []string, shares [][]gpu.Share) {
		j := jobs[id]
		if shares != nil && len(shares) != len(names) {
			t.Fatalf("job %d: shares for %d nodes, placed on %d", id, len(shares), len(names))
		}
		d := plannedDuration(s, j)
		for i, name := range names {
			n := nodes[name]
			var got []gpu.Share
			if shares != nil {
				got = shares[i]
			}
			wants := j.PerNode.FGPU > 0 || j.GPUs > 0
			if len(n.GPUs) == 0 || !wants {
				if len(got) > 0 {
					t.Fatalf("job %d got shares %v on %s, which it does not need there", id, got, name)
				}
				continue
			}
			perGPU := perGPUOf(n)
			amount := gpu.Hundredths(j.PerNode.FGPU) + gpu.GPUs(j.GPUs, perGPU)
			mustFollowPacking(t, id, n, got, amount, j.GPUType)
			for _, sh := range got {
				hold(name, sh, j.UID, at, d, d == 0)
			}
		}
	}
	for _, st := range plan.Starts {
		place(st.JobID, s.Now, st.Nodes, st.GPUs)
	}
	for _, e := range plan.Pending {
		if !e.Start.IsZero() {
			place(e.JobID, e.Start, e.Nodes, e.GPUs)
		}
	}
	for k, list := range evs {
		worth := perGPUOf(nodes[k.node])
		sort.SliceStable(list, func(a, b int) bool {
			x, y := list[a], list[b]
			if x.at.IsZero() != y.at.IsZero() {
				return y.at.IsZero()
			}
			if !x.at.Equal(y.at) {
				return x.at.Before(y.at)
			}
			return !x.add && y.add
		})
		var used gpu.Hundredths
		mpsBy := map[uint32]int{}
		for _, e := range list {
			if !e.add {
				used -= e.amount
				if e.mps {
					mpsBy[e.uid]--
				}
				continue
			}
			used += e.amount
			if used > worth {
				t.Fatalf("device %s/%d overcommitted at %v: %s > %s", k.node, k.dev, e.at.Sub(s.Now), used, worth)
			}
			if e.mps {
				mpsBy[e.uid]++
				for uid, c := range mpsBy {
					if uid != e.uid && c > 0 {
						t.Fatalf("device %s/%d: MPS fractions of uids %d and %d at %v", k.node, k.dev, uid, e.uid, e.at.Sub(s.Now))
					}
				}
			}
		}
	}
}

// mustFollowPacking checks one job's shares on one node against the rule.
func mustFollowPacking(t testing.TB, id uint64, n Node, shares []gpu.Share, amount gpu.Hundredths, typ string) {
	t.Helper()
	perGPU := perGPUOf(n)
	if len(shares) == 0 {
		t.Fatalf("job %d needs %s fGPU on %s and got no shares", id, amount, n.Name)
	}
	var total gpu.Hundredths
	fractions := 0
	seen := map[int]bool{}
	for _, sh := range shares {
		dev, ok := gpu.Lookup(n.GPUs, sh.Device)
		if !ok || seen[sh.Device] {
			t.Fatalf("job %d: share %+v on %s names a missing or repeated device", id, sh, n.Name)
		}
		seen[sh.Device] = true
		if !gpu.MatchesType(dev.Name, typ) {
			t.Fatalf("job %d wants %q and got %s", id, typ, dev.Name)
		}
		if dev.MIGEnabled != (sh.MIG != nil) {
			t.Fatalf("job %d: share %+v on device with MIG %v", id, sh, dev.MIGEnabled)
		}
		if sh.Amount < perGPU {
			fractions++
		}
		total += sh.Amount
	}
	if total < amount || fractions > 1 || amount <= perGPU && len(shares) != 1 {
		t.Fatalf("job %d: shares %s on %s for %s fGPU break the packing rule", id, amountsOf(shares), n.Name, amount)
	}
}

// ---- brute force, for the property tests ----

// gpuHold is what a job holds of a node's devices over [from, to) (zero
// to: forever).
type gpuHold struct {
	from, to time.Time
	shares   []gpu.Share
	uid      uint32
}

// scalarNeed is what j needs of n's resources and what n offers, by the
// planner's rule: a node with devices leaves fGPU to them; a pool counts
// whole GPUs at one fGPU each and cannot serve a GPU type (ok false).
func scalarNeed(n Node, j Pending) (need, capacity Resources, ok bool) {
	need, capacity = j.PerNode, n.Capacity
	if len(n.GPUs) > 0 {
		need.FGPU, capacity.FGPU = 0, 0
		return need, capacity, true
	}
	need.FGPU += int(gpu.GPUs(j.GPUs, gpu.DefaultPerGPU))
	return need, capacity, !(j.GPUType != "" && (j.PerNode.FGPU > 0 || j.GPUs > 0))
}

// deviceFitsOver says, by brute force, whether j's GPUs fit on n's devices
// over [from, from+d) (d == 0: forever) beside the holds: for each device
// the least it has free at any moment of the span (the span's start and
// every hold's start in it) and whether another user's MPS fraction holds
// it at some moment of it.
func deviceFitsOver(n Node, j Pending, holds []gpuHold, from time.Time, d time.Duration) bool {
	perGPU := perGPUOf(n)
	overlaps := func(h gpuHold) bool {
		return (d == 0 || h.from.Before(from.Add(d))) && (h.to.IsZero() || h.to.After(from))
	}
	var view []gpu.DeviceFree
	for _, dev := range gpu.FilterType(n.GPUs, j.GPUType) {
		f := gpu.DeviceFree{Device: dev, Free: perGPU, MPSUser: j.UID}
		points := []time.Time{from}
		for _, h := range holds {
			if overlaps(h) && h.from.After(from) {
				points = append(points, h.from)
			}
		}
		for _, p := range points {
			var used gpu.Hundredths
			for _, h := range holds {
				if h.from.After(p) || !(h.to.IsZero() || h.to.After(p)) {
					continue
				}
				for _, sh := range h.shares {
					if sh.Device == dev.Index {
						used += sh.Amount
					}
				}
			}
			f.Free = min(f.Free, max(perGPU-used, 0))
		}
		for _, h := range holds {
			for _, sh := range h.shares {
				if overlaps(h) && sh.Device == dev.Index && isMPS(dev, sh.Amount, perGPU) {
					f.MPSShared = true
					if h.uid != j.UID {
						f.MPSUser = ^j.UID
					}
				}
			}
		}
		view = append(view, f)
	}
	amount := gpu.Hundredths(j.PerNode.FGPU) + gpu.GPUs(j.GPUs, perGPU)
	return gpu.Fits(view, gpu.Request{Amount: amount, UID: j.UID}, perGPU)
}
