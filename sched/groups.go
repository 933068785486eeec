package sched

import "github.com/corral-hpc/corral/api"

// Group limits are decided at the moment a job would start: the running
// members and the starts already made in this plan count, reservations do
// not. A job that cannot join its groups now is treated like a blocked
// job: it starts nowhere, reserves nothing and gets no estimate, exactly
// as the controller showed such jobs before the limits moved here (a hold
// decided from the running jobs alone). So starts never go past a limit;
// a planned start in the future may (that job is checked again when its
// time comes), which keeps a limited job from holding nodes idle.

// reasonGroupLimit is shown for a limit that names no reason of its own.
const reasonGroupLimit api.Reason = "GroupLimit"

// groups tracks what each limited group holds during one plan. The zero
// value (no limits) admits everything at no cost.
type groups struct {
	limits map[string]GroupLimit
	used   map[string]int64
}

func newGroups(s *Snapshot) groups {
	if len(s.GroupLimits) == 0 {
		return groups{}
	}
	g := groups{limits: s.GroupLimits, used: make(map[string]int64, len(s.GroupLimits))}
	for i := range s.Running {
		for _, m := range s.Running[i].Groups {
			if _, ok := g.limits[m.Group]; ok {
				g.used[m.Group] += m.Use
			}
		}
	}
	return g
}

// over is the reason j may not start now: that of the first of its
// groups it would take past the limit; "" when it may.
func (g *groups) over(j *Pending) api.Reason {
	if g.limits == nil {
		return ""
	}
	for _, m := range j.Groups {
		if l, ok := g.limits[m.Group]; ok && g.used[m.Group]+m.Use > l.Max {
			if l.Reason == "" {
				return reasonGroupLimit
			}
			return l.Reason
		}
	}
	return ""
}

// join counts a start of j.
func (g *groups) join(j *Pending) {
	if g.limits == nil {
		return
	}
	for _, m := range j.Groups {
		if _, ok := g.limits[m.Group]; ok {
			g.used[m.Group] += m.Use
		}
	}
}
