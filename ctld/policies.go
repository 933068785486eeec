package ctld

import (
	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/policy"
)

// PoliciesFile in the state directory holds the resource policies.
const PoliciesFile = "policies.json"

// jobRequest is what a job holds while it runs, on all its nodes.
func jobRequest(job *api.Job) policy.Request {
	n := job.NodeCount
	if len(job.Nodes) > 0 {
		n = len(job.Nodes)
	}
	if n < 1 {
		n = 1
	}
	per := perNode(job)
	return policy.Request{CPUs: per.CPUs * n, MemBytes: per.MemBytes * int64(n), FGPU: per.FGPU * n}
}

// checkPolicySubmitLocked refuses a job over a per-job maximum or the
// pending-jobs maximum of its user's or account's policy. The caller
// holds s.mu (read).
func (s *Server) checkPolicySubmitLocked(user string, spec *api.JobSpec) error {
	ul, al := s.policies.Limits(user, spec.Account)
	if ul == (api.Limits{}) && al == (api.Limits{}) {
		return nil
	}
	nodes := max(spec.Nodes, 1)
	per := perNode(&api.Job{CPUs: spec.CPUs, MemBytes: spec.MemBytes, Spec: *spec})
	r := policy.Request{CPUs: per.CPUs * nodes, MemBytes: per.MemBytes * int64(nodes), FGPU: per.FGPU * nodes}
	adds := 1
	if spec.Array != nil {
		adds = spec.Array.Count()
	}
	var tally *policy.Tally
	if ul.MaxPendingJobs > 0 || al.MaxPendingJobs > 0 {
		tally = s.policyTallyLocked(true)
	} else {
		tally = policy.NewTally()
	}
	if err := policy.CheckSubmit("user "+user, ul, r, tally.Users[user].Pending, adds); err != nil {
		return fault.Errorf(fault.Invalid, "%v; nothing was submitted", err)
	}
	if spec.Account != "" {
		if err := policy.CheckSubmit("account "+spec.Account, al, r, tally.Accounts[spec.Account].Pending, adds); err != nil {
			return fault.Errorf(fault.Invalid, "%v; nothing was submitted", err)
		}
	}
	return nil
}

// policyTallyLocked counts what every user and account runs (and, with
// pending, has pending): the running jobs from the queue's running index
// (a suspended job keeps its resources), the pending ones from its
// per-owner counts, so a tally costs O(running jobs + owners), not a walk
// of the pending queue. The caller holds s.mu.
func (s *Server) policyTallyLocked(pending bool) *policy.Tally {
	t := policy.NewTally()
	for _, j := range s.q.runningJobs() {
		job := &j.rec.Job
		t.AddRunning(job.User, job.Spec.Account, jobRequest(job))
	}
	if pending {
		for k, n := range s.q.pendingOwners {
			t.AddPending(k.User, k.Account, n)
		}
	}
	return t
}

// setPolicy sets one user's or account's limits (admins only).
func (s *Server) setPolicy(caller peer, p api.Policy) error {
	if !s.gate.IsAdmin(caller.caller()) {
		return fault.Errorf(fault.Forbidden, "only an administrator may change policies")
	}
	if err := policy.Validate(p); err != nil {
		return fault.Errorf(fault.Invalid, "%v", err)
	}
	if err := s.policies.Put(p); err != nil {
		return err
	}
	s.log.Printf("policy %s %s set to %+v by uid %d", p.Kind, p.Name, p.Limits, caller.UID)
	s.Kick() // a raised limit may let jobs start
	return nil
}
