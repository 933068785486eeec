package sched

import (
	"sort"

	"github.com/corral-hpc/corral/gpu"
)

// FirstFit starts pending jobs in priority order (then submit time, then ID)
// on the first nodes of their partition with enough free resources, and
// skips jobs that do not fit. It makes no reservations and estimates no
// start times; it is the simplest correct planner and the baseline others
// are compared with.
type FirstFit struct{}

var _ Planner = FirstFit{}

// Plan implements Planner.
func (FirstFit) Plan(s Snapshot) Plan {
	free := make(map[string]Resources, len(s.Nodes))
	up := make(map[string]bool, len(s.Nodes))
	devs := make(map[string]*Node, len(s.Nodes)) // nodes with devices
	held := make(map[string][]gpu.Holding)
	on := make(map[string][]occupant) // the jobs on each node, for sharing
	for i, n := range s.Nodes {
		free[n.Name] = n.Capacity
		up[n.Name] = n.Up
		if len(n.GPUs) > 0 {
			devs[n.Name] = &s.Nodes[i]
			free[n.Name] = Resources{CPUs: n.Capacity.CPUs, MemBytes: n.Capacity.MemBytes, FGPU: unlimitedFGPU}
		}
	}
	for _, r := range s.Running {
		for _, a := range r.Alloc {
			free[a.Node] = free[a.Node].Sub(a.Resources)
			on[a.Node] = append(on[a.Node], occupant{uid: r.UID, share: r.Sharing})
			for _, sh := range a.GPUs {
				held[a.Node] = append(held[a.Node], gpu.Holding{UID: r.UID, Share: sh})
			}
		}
	}
	parts := make(map[string]Partition, len(s.Partitions))
	for _, p := range s.Partitions {
		parts[p.Name] = p
	}
	pending := SortByPriority(s.Pending)
	var plan Plan
	blockedByResources := false
	g := newGroups(&s)
	for i := range pending {
		j := &pending[i]
		if j.Blocked != "" {
			plan.Pending = append(plan.Pending, Estimate{JobID: j.ID, Reason: j.Blocked})
			continue
		}
		if why := g.over(j); why != "" {
			plan.Pending = append(plan.Pending, Estimate{JobID: j.ID, Reason: why})
			continue
		}
		want := j.NodeCount
		if want < 1 {
			want = 1
		}
		need := j.PerNode
		need.FGPU += int(gpu.GPUs(j.GPUs, gpu.DefaultPerGPU))
		wantsGPU := j.PerNode.FGPU > 0 || j.GPUs > 0
		var chosen []string
		var shares [][]gpu.Share
		anyUp := false
		for _, name := range parts[j.Partition].Nodes {
			if !up[name] {
				continue
			}
			anyUp = true
			if !j.allows(name) || !need.Fits(free[name]) || sharingConflict(on[name], j.UID, j.Sharing) {
				continue
			}
			var got []gpu.Share
			if n := devs[name]; n != nil && wantsGPU {
				perGPU := n.FGPUPerGPU
				if perGPU == 0 {
					perGPU = gpu.DefaultPerGPU
				}
				view := gpu.FreeOf(gpu.FilterType(n.GPUs, j.GPUType), held[name], perGPU)
				amount := gpu.Hundredths(j.PerNode.FGPU) + gpu.GPUs(j.GPUs, perGPU)
				var ok bool
				if got, ok = gpu.Pack(view, gpu.Request{Amount: amount, UID: j.UID}, perGPU); !ok {
					continue
				}
			} else if wantsGPU && j.GPUType != "" {
				continue // a pool cannot tell models apart
			}
			chosen = append(chosen, name)
			shares = append(shares, got)
			if len(chosen) == want {
				break
			}
		}
		if len(chosen) == want {
			st := Start{JobID: j.ID, Nodes: chosen}
			for i, name := range chosen {
				free[name] = free[name].Sub(need)
				on[name] = append(on[name], occupant{uid: j.UID, share: j.Sharing})
				for _, sh := range shares[i] {
					held[name] = append(held[name], gpu.Holding{UID: j.UID, Share: sh})
				}
				if len(shares[i]) > 0 {
					st.GPUs = shares
				}
			}
			plan.Starts = append(plan.Starts, st)
			g.join(j)
			continue
		}
		reason := "Resources"
		switch {
		case !anyUp:
			reason = "NodeDown"
		case blockedByResources:
			reason = "Priority"
		}
		blockedByResources = blockedByResources || anyUp
		plan.Pending = append(plan.Pending, Estimate{JobID: j.ID, Reason: reasonOf(reason)})
	}
	return plan
}

// SortByPriority returns the jobs ordered highest priority first, then by
// submit time, then by ID, without modifying the input.
func SortByPriority(in []Pending) []Pending {
	out := append([]Pending(nil), in...)
	sort.SliceStable(out, func(a, b int) bool { return pendingBefore(&out[a], &out[b]) })
	return out
}
