package sched

import (
	"slices"
	"sort"

	"github.com/corral-hpc/corral/gpu"
)

// Per-device GPU placement. A node with devices keeps one availability
// profile per device next to its resource timeline: how many hundredths
// of the device are free from each instant on, and whose MPS fractions
// hold it. A GPU request fits on such a node at t when its resources fit
// the node's timeline over [t, t+dur) and package gpu's packing rule
// (gpu.Fits) places it on the devices as they are over that whole span:
// each device counts with the least it has free in the span, and as
// shared with another user if another user's MPS fraction holds it at any
// moment of it. Reservations then hold the shares gpu.Pack chose, on their
// devices, for exactly the job's span, so no device is ever overcommitted
// and a fraction never lands where it does not fit on one device.
//
// Nodes without devices keep Resources.FGPU as a plain pool, as before.

// unlimitedFGPU is the scalar FGPU capacity of a node with devices: there
// the devices decide and the scalar never refuses.
const unlimitedFGPU = 1 << 40

// devSeg is what one device has from one instant on.
type devSeg struct {
	free  gpu.Hundredths
	mps   int32  // MPS fractions holding it
	uid   uint32 // their user, while mps > 0
	mixed bool   // fractions of several users (only from inconsistent input)
}

// hold adds a share to the segment.
func (s *devSeg) hold(amount gpu.Hundredths, uid uint32, mps bool) {
	s.free -= amount
	if !mps {
		return
	}
	if s.mps == 0 {
		s.uid = uid
	} else if s.uid != uid {
		s.mixed = true
	}
	s.mps++
}

// devTimeline is one device's profile: seg[i] holds from at[i] until
// at[i+1] (the last one forever); at[0] == 0.
type devTimeline struct {
	at  []int64
	seg []devSeg
}

func (tl *devTimeline) find(t int64) int {
	i := sort.Search(len(tl.at), func(i int) bool { return tl.at[i] > t })
	return max(i-1, 0)
}

// next returns the first segment start after t, or never.
func (tl *devTimeline) next(t int64) int64 {
	if i := tl.find(t) + 1; i < len(tl.at) {
		return tl.at[i]
	}
	return never
}

func (tl *devTimeline) split(t int64) int {
	i := tl.find(t)
	if tl.at[i] == t {
		return i
	}
	tl.at = slices.Insert(tl.at, i+1, t)
	tl.seg = slices.Insert(tl.seg, i+1, tl.seg[i])
	return i + 1
}

// reserve holds a share over [from, to).
func (tl *devTimeline) reserve(from, to int64, amount gpu.Hundredths, uid uint32, mps bool) {
	if to <= from {
		return
	}
	i := tl.split(from)
	j := len(tl.at)
	if to != never {
		j = tl.split(to)
	}
	for k := i; k < j; k++ {
		tl.seg[k].hold(amount, uid, mps)
	}
	if j < len(tl.at) && tl.seg[j] == tl.seg[j-1] {
		tl.del(j)
	}
	if i > 0 && tl.seg[i] == tl.seg[i-1] {
		tl.del(i)
	}
}

func (tl *devTimeline) del(i int) {
	tl.at = slices.Delete(tl.at, i, i+1)
	tl.seg = slices.Delete(tl.seg, i, i+1)
}

// devHold is a running job's share, for building device timelines.
type devHold struct {
	end   int64 // never: no known end
	share gpu.Share
	uid   uint32
}

// nodeGPUs is a node's devices while a plan is built.
type nodeGPUs struct {
	devs    []gpu.Device
	perGPU  gpu.Hundredths
	tls     []devTimeline     // parallel to devs
	pos     map[int]int       // device index -> position in devs
	typeOK  map[string][]bool // per GPU type, which devices it matches
	scratch []gpu.DeviceFree
}

// isMPS says whether a share of amount on d is an MPS fraction: less than
// a whole device, on a device not in MIG mode (gpu.FreeOf's rule).
func isMPS(d gpu.Device, amount, perGPU gpu.Hundredths) bool {
	return !d.MIGEnabled && amount < perGPU
}

// newNodeGPUs builds the device profiles of a node from what running jobs
// hold. Each segment is computed from every share active in it, so the
// MPS users are exact even where input is inconsistent.
func newNodeGPUs(n Node, holds map[int][]devHold) *nodeGPUs {
	perGPU := n.FGPUPerGPU
	if perGPU == 0 {
		perGPU = gpu.DefaultPerGPU
	}
	g := &nodeGPUs{devs: n.GPUs, perGPU: perGPU, tls: make([]devTimeline, len(n.GPUs)),
		pos: make(map[int]int, len(n.GPUs)), typeOK: map[string][]bool{}}
	for k, d := range n.GPUs {
		g.pos[d.Index] = k
		hs := holds[d.Index]
		starts := []int64{0}
		for _, h := range hs {
			if h.end != never {
				starts = append(starts, h.end)
			}
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
		tl := &g.tls[k]
		for _, s := range starts {
			seg := devSeg{free: perGPU}
			for _, h := range hs {
				if h.end > s {
					seg.hold(h.share.Amount, h.uid, isMPS(d, h.share.Amount, perGPU))
				}
			}
			if last := len(tl.seg) - 1; last >= 0 && tl.seg[last] == seg {
				continue
			}
			tl.at = append(tl.at, s)
			tl.seg = append(tl.seg, seg)
		}
	}
	return g
}

// matching says which devices a GPU type names (cached per type).
func (g *nodeGPUs) matching(typ string) []bool {
	if ok, found := g.typeOK[typ]; found {
		return ok
	}
	ok := make([]bool, len(g.devs))
	for k, d := range g.devs {
		ok[k] = gpu.MatchesType(d.Name, typ)
	}
	g.typeOK[typ] = ok
	return ok
}

// view is the packer's picture of the devices typ matches over [from,
// to), for a job of uid: the least each has free in the span, and shared
// with another user if another user's MPS fraction holds it at any moment
// of it. from == to asks about the idle devices.
func (g *nodeGPUs) view(typ string, uid uint32, from, to int64) []gpu.DeviceFree {
	ok := g.matching(typ)
	out := g.scratch[:0]
	for k, d := range g.devs {
		if !ok[k] {
			continue
		}
		f := gpu.DeviceFree{Device: d, Free: g.perGPU}
		if from < to {
			tl := &g.tls[k]
			other := false
			for i := tl.find(from); i < len(tl.at) && tl.at[i] < to; i++ {
				s := &tl.seg[i]
				f.Free = min(f.Free, max(s.free, 0))
				if s.mps > 0 {
					f.MPSShared = true
					other = other || s.mixed || s.uid != uid
				}
			}
			f.MPSUser = uid
			if other {
				f.MPSUser = ^uid // anyone but uid
			}
		}
		out = append(out, f)
	}
	g.scratch = out
	return out
}

// wantsGPU says whether the request needs any device.
func (r *request) wantsGPU() bool { return r.PerNode.FGPU > 0 || r.GPUs > 0 }

// gpuAmount is what the request needs of a node whose GPUs are worth
// perGPU each.
func (r *request) gpuAmount(perGPU gpu.Hundredths) gpu.Hundredths {
	return gpu.Hundredths(r.PerNode.FGPU) + gpu.GPUs(r.GPUs, perGPU)
}

// gpuBound says whether placing r on n involves n's devices.
func (n *nodeState) gpuBound(r *request) bool { return n.gpus != nil && r.wantsGPU() }

// canHold says whether r could ever run on the idle node: it fits and
// the job allows it.
func (n *nodeState) canHold(r *request) bool {
	if !r.need.Fits(n.capacity) || !r.allows(n.name) {
		return false
	}
	switch {
	case !r.wantsGPU():
		return true
	case n.gpus == nil:
		return r.GPUType == "" // a pool cannot tell models apart
	}
	g := n.gpus
	return gpu.Fits(g.view(r.GPUType, r.UID, 0, 0), gpu.Request{Amount: r.gpuAmount(g.perGPU), UID: r.UID}, g.perGPU)
}

// gpuFitsAt says whether r's devices fit over [t, t+dur).
func (n *nodeState) gpuFitsAt(r *request, t int64) bool {
	g := n.gpus
	return gpu.Fits(g.view(r.GPUType, r.UID, t, satAdd(t, r.dur)), gpu.Request{Amount: r.gpuAmount(g.perGPU), UID: r.UID}, g.perGPU)
}

// fitsAt says whether r fits on n over [t, t+dur): resources, devices
// and the jobs it would share the node with.
func (n *nodeState) fitsAt(r *request, t int64) bool {
	return n.tl.earliest(r.need, r.dur, t, t+1) == t && n.othersFitAt(r, t)
}

// stepwise says whether r's start on n depends on more than its resource
// timeline: its devices or the node's occupants.
func (n *nodeState) stepwise(r *request) bool { return n.gpuBound(r) || n.occ.bound(r) }

// othersFitAt checks what the resource timeline does not: devices and
// sharing.
func (n *nodeState) othersFitAt(r *request, t int64) bool {
	return (!n.gpuBound(r) || n.gpuFitsAt(r, t)) && (!n.occ.bound(r) || n.occ.fitsAt(r, t))
}

// nextChange is the first instant after t at which the node's timeline or
// any of its device profiles changes; never if none does.
func (n *nodeState) nextChange(t int64) int64 {
	next := n.tl.endOf(n.tl.find(t))
	if g := n.gpus; g != nil {
		for k := range g.tls {
			next = min(next, g.tls[k].next(t))
		}
	}
	return min(next, n.occ.nextChange(t))
}

// earliest is the first t in [from, limit) at which r fits on n, or never.
// The earliest start is from or an instant at which something changes (a
// later start whose span begins between two changes could start at the
// earlier change too), so the search steps from one change to the next,
// letting the resource timeline skip the stretches where resources alone
// do not fit.
func (n *nodeState) earliest(r *request, from, limit int64) int64 {
	if !n.stepwise(r) {
		return n.tl.earliest(r.need, r.dur, from, limit)
	}
	for t := from; ; {
		if t = n.tl.earliest(r.need, r.dur, t, limit); t == never || n.othersFitAt(r, t) {
			return t
		}
		if t = n.nextChange(t); t >= limit {
			return never
		}
	}
}

// window returns the first window [a, b] of starts at or after from at
// each of which r fits on n (b = never: every later start too); a = never
// when there is none. Once r fits at a, a later start can stop fitting
// only when its span first reaches a new segment, at e-dur+1 for a change
// at e, so those are the only points checked.
func (n *nodeState) window(r *request, from int64) (a, b int64) {
	if !n.stepwise(r) {
		return n.tl.window(r.need, r.dur, from)
	}
	if a = n.earliest(r, from, never); a == never {
		return never, never
	}
	e := satAdd(a, r.dur)
	if e == never {
		return a, never
	}
	for e--; ; {
		if e = n.nextChange(e); e == never {
			return a, never
		}
		if t := e - r.dur + 1; !n.fitsAt(r, t) {
			return a, t - 1
		}
	}
}

// reserveGPUs packs r on n's devices over [at, end) and holds the shares.
func (n *nodeState) reserveGPUs(r *request, at, end int64) []gpu.Share {
	g := n.gpus
	shares, ok := gpu.Pack(g.view(r.GPUType, r.UID, at, end), gpu.Request{Amount: r.gpuAmount(g.perGPU), UID: r.UID}, g.perGPU)
	if !ok {
		// The search checked this very span; reaching here is a bug. The
		// job is still placed on the node's resources, without shares,
		// and the controller refuses to start it without them.
		return nil
	}
	for _, s := range shares {
		k := g.pos[s.Device]
		g.tls[k].reserve(at, end, s.Amount, r.UID, isMPS(g.devs[k], s.Amount, g.perGPU))
	}
	return shares
}
