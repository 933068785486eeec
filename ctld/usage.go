package ctld

import (
	"sort"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/sched"
)

// What the cluster and its users hold now (corral usage, and the metrics
// gauges): the partitions' allocated and total resources, and each
// user's running and pending jobs against their policy.

// usageFor is every partition's allocated and total resources, and the
// caller's (or, for operators and up, the named user's or, with all,
// everyone's) running resources against their policy.
func (s *Server) usageFor(caller peer, who string, all bool) (api.Usage, error) {
	me := s.users.name(caller.UID)
	if (all || who != "" && who != me) && !s.gate.IsOperator(caller.caller()) {
		return api.Usage{}, fault.Errorf(fault.Forbidden, "only an operator or administrator may see other users' usage")
	}
	if who == "" {
		who = me
	}
	return s.usage(who, all), nil
}

// usage reads the partitions from the node view (the numbers of `corral
// nodes`, fGPU included) and the users from the jobs.
func (s *Server) usage(who string, all bool) api.Usage {
	out := api.Usage{Partitions: []api.PartitionUsage{}, Users: []api.UserUsage{}}
	nodes := s.listNodes()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.parts.list {
		pu := api.PartitionUsage{Partition: p.Name}
		for _, n := range nodes {
			if !s.parts.contains(p.Name, n.Name) {
				continue
			}
			pu.Allocated = addAmounts(pu.Allocated, sched.Resources{CPUs: n.AllocCPUs, MemBytes: n.AllocMemBytes, FGPU: n.AllocFGPUHundredths})
			pu.Total = addAmounts(pu.Total, sched.Resources{CPUs: n.CPUs, MemBytes: n.MemBytes, FGPU: n.FGPUHundredths})
		}
		out.Partitions = append(out.Partitions, pu)
	}
	t := s.policyTallyLocked(true)
	users := []string{who}
	if all {
		users = users[:0]
		for u := range t.Users {
			users = append(users, u)
		}
		sort.Strings(users)
	}
	for _, u := range users {
		in := t.Users[u]
		ul, _ := s.policies.Limits(u, "")
		out.Users = append(out.Users, api.UserUsage{User: u, RunningJobs: in.Running, PendingJobs: in.Pending,
			Allocated: api.UsageAmounts{CPUs: in.CPUs, MemBytes: in.MemBytes, FGPU: in.FGPU},
			Allowed:   api.UsageAmounts{CPUs: ul.MaxCPUs, MemBytes: ul.MaxMemBytes, FGPU: ul.MaxFGPU}})
	}
	return out
}

func addAmounts(a api.UsageAmounts, r sched.Resources) api.UsageAmounts {
	return api.UsageAmounts{CPUs: a.CPUs + r.CPUs, MemBytes: a.MemBytes + r.MemBytes, FGPU: a.FGPU + r.FGPU}
}
