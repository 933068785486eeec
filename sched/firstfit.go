package sched

import "sort"

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
	for _, n := range s.Nodes {
		free[n.Name] = n.Capacity
		up[n.Name] = n.Up
	}
	for _, r := range s.Running {
		for _, a := range r.Alloc {
			free[a.Node] = free[a.Node].Sub(a.Resources)
		}
	}
	parts := make(map[string]Partition, len(s.Partitions))
	for _, p := range s.Partitions {
		parts[p.Name] = p
	}
	pending := SortByPriority(s.Pending)
	var plan Plan
	blockedByResources := false
	for _, j := range pending {
		if j.Blocked != "" {
			plan.Pending = append(plan.Pending, Estimate{JobID: j.ID, Reason: j.Blocked})
			continue
		}
		want := j.NodeCount
		if want < 1 {
			want = 1
		}
		var chosen []string
		anyUp := false
		for _, name := range parts[j.Partition].Nodes {
			if !up[name] {
				continue
			}
			anyUp = true
			if j.PerNode.Fits(free[name]) {
				chosen = append(chosen, name)
				if len(chosen) == want {
					break
				}
			}
		}
		if len(chosen) == want {
			for _, name := range chosen {
				free[name] = free[name].Sub(j.PerNode)
			}
			plan.Starts = append(plan.Starts, Start{JobID: j.ID, Nodes: chosen})
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
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Priority != y.Priority {
			return x.Priority > y.Priority
		}
		if !x.Submit.Equal(y.Submit) {
			return x.Submit.Before(y.Submit)
		}
		return x.ID < y.ID
	})
	return out
}
