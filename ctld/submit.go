package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/jobspec"
)

// defaultMemPerCPU is used when neither the partition nor any known node
// gives a memory-per-CPU figure.
const defaultMemPerCPU = 1 << 30

// submit validates a request, fills its defaults, stores the job durably
// and only then makes it visible and wakes the scheduler.
func (s *Server) submit(caller peer, req api.SubmitRequest) (uint64, error) {
	rec, err := s.checkSubmit(caller, req)
	if err != nil {
		return 0, err
	}
	id, err := s.storeSubmit(rec)
	if err == nil {
		s.metrics.submitted()
	}
	return id, err
}

// checkSubmit does every check a submit gets and fills the defaults
// (admission): it returns the record as it would be stored, and stores
// nothing (a test-only submit stops here).
func (s *Server) checkSubmit(caller peer, req api.SubmitRequest) (*store.JobRecord, error) {
	uid := caller.UID
	if req.OnBehalfOf != nil {
		if caller.UID != 0 {
			return nil, fault.Errorf(fault.Forbidden, "only root may submit on behalf of another user (you are uid %d)", caller.UID)
		}
		uid = *req.OnBehalfOf
	}
	owner, err := s.users.get(uid)
	if err != nil {
		return nil, fault.Errorf(fault.Invalid, "%v", err)
	}
	now := time.Now()
	s.mu.RLock()
	spec, err := (&admission{s: s, caller: caller, owner: owner, now: now}).admit(req.Spec)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	job := api.Job{
		Name: spec.Name, User: owner.Name, UID: owner.UID, GID: owner.GID, Groups: owner.Groups,
		Partition: spec.Partition, CPUs: spec.CPUs, MemBytes: spec.MemBytes, NodeCount: spec.Nodes,
		TimeLimit: spec.TimeLimit, Spec: spec,
	}
	gpuRequestOf(&spec).apply(&job)
	return &store.JobRecord{Job: lifecycle.New(job, spec.Hold, now), Home: owner.Home}, nil
}

// storeSubmit stores a checked job (the queue stores an array job as its
// remainder) and only then makes it visible and wakes the scheduler.
func (s *Server) storeSubmit(rec *store.JobRecord) (uint64, error) {
	id, err := s.q.submit(rec, &s.mu)
	if err != nil {
		return 0, err
	}
	s.Kick()
	s.web.changed()
	spec := &rec.Job.Spec
	if spec.Array != nil {
		n := countRanges(spec.Array.Ranges)
		s.log.Printf("submit array job %d tasks=%s (%d) user=%s partition=%s cpus=%d mem=%s time=%s", id,
			jobspec.FormatArray(*spec.Array), n, rec.Job.User, spec.Partition, spec.CPUs,
			config.FormatSize(spec.MemBytes), config.FormatTime(spec.TimeLimit))
		return id, nil
	}
	s.log.Printf("submit job %d user=%s partition=%s nodes=%d cpus=%d mem=%s time=%s",
		id, rec.Job.User, spec.Partition, spec.Nodes, spec.CPUs, config.FormatSize(spec.MemBytes), config.FormatTime(spec.TimeLimit))
	return id, nil
}
