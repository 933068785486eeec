package ctld

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
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

// checkSubmit does every check a submit gets and fills the defaults: it
// returns the record as it would be stored, and stores nothing (a
// test-only submit stops here).
func (s *Server) checkSubmit(caller peer, req api.SubmitRequest) (*store.JobRecord, error) {
	uid := caller.UID
	if req.OnBehalfOf != nil {
		if caller.UID != 0 {
			return nil, errorf(http.StatusForbidden, "only root may submit on behalf of another user (you are uid %d)", caller.UID)
		}
		uid = *req.OnBehalfOf
	}
	owner, err := s.users.get(uid)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	spec := req.Spec
	s.mu.RLock()
	err = s.checkSpecLocked(&spec)
	if err == nil {
		err = s.checkPipelineLocked(caller, &spec)
	}
	var gpus gpuRequest
	if err == nil {
		gpus, err = s.checkGPUsLocked(&spec, owner.UID) // gpus.go
	}
	s.mu.RUnlock()
	if err == nil {
		err = s.checkAccount(owner.Name, &spec) // -A, or the owner's default account
	}
	if err == nil {
		err = s.checkEnvironment(owner, &spec) // environments.go: name, image, mounts, policies
	}
	if err == nil {
		err = s.checkMountRoots(&spec) // mountroots.go: some node of the partition allows the mounts
	}
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rec := &store.JobRecord{
		Job: api.Job{
			Name: spec.Name, User: owner.Name, UID: owner.UID, GID: owner.GID, Groups: owner.Groups,
			Partition: spec.Partition, State: api.StatePending, Reason: api.ReasonNone,
			CPUs: spec.CPUs, MemBytes: spec.MemBytes, NodeCount: spec.Nodes, TimeLimit: spec.TimeLimit,
			SubmitTime: now, Spec: spec,
			History: []api.Transition{{State: api.StatePending, Time: now}},
		},
		Home: owner.Home,
	}
	gpus.apply(&rec.Job)
	if spec.Hold {
		rec.Job.Hold, rec.Job.Reason = lifecycle.HoldUser, api.ReasonJobHeld
	}
	return rec, nil
}

// storeSubmit stores a checked job (an array job as its remainder, see
// array.go) and only then makes it visible and wakes the scheduler.
func (s *Server) storeSubmit(rec *store.JobRecord) (uint64, error) {
	if rec.Job.Spec.Array != nil {
		return s.storeArray(rec)
	}
	id, err := s.store.AddJob(rec)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	j := &job{rec: *rec}
	s.jobs[id] = j
	s.active[id] = j
	s.mu.Unlock()
	s.Kick()
	spec := &rec.Job.Spec
	s.log.Printf("submit job %d user=%s partition=%s nodes=%d cpus=%d mem=%s time=%s",
		id, rec.Job.User, spec.Partition, spec.Nodes, spec.CPUs, config.FormatSize(spec.MemBytes), config.FormatTime(spec.TimeLimit))
	return id, nil
}

// checkSpecLocked rejects what could never run and fills defaults in
// place. The caller holds s.mu (read is enough).
func (s *Server) checkSpecLocked(spec *api.JobSpec) error {
	bad := func(format string, args ...any) error { return errorf(http.StatusBadRequest, format, args...) }
	switch {
	case strings.TrimSpace(spec.Script) == "":
		return bad("script is empty")
	case spec.CPUs < 1:
		return bad("cpus must be at least 1 (got %d)", spec.CPUs)
	case spec.MemBytes < 0:
		return bad("memory must not be negative (got %d bytes)", spec.MemBytes)
	case spec.ShmBytes < 0:
		return bad("shm size must not be negative (got %d bytes)", spec.ShmBytes)
	case spec.Nodes < 0:
		return bad("nodes must be at least 1 (got %d)", spec.Nodes)
	case spec.TimeLimit < 0:
		return bad("time limit must not be negative (got %d seconds)", spec.TimeLimit)
	case spec.WorkDir == "" || !filepath.IsAbs(spec.WorkDir):
		return bad("work directory must be an absolute path (got %q)", spec.WorkDir)
	}
	if err := refuseNotYetHonoured(spec); err != nil {
		return err
	}
	if err := checkAbsurd(spec, time.Now()); err != nil { // sanity.go
		return err
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad("environment entry %q is not KEY=VALUE", kv)
		}
	}
	if spec.Partition == "" {
		spec.Partition = s.parts.def
	}
	part, ok := s.parts.byName[spec.Partition]
	if !ok {
		return bad("partition %s does not exist (partitions: %s)", spec.Partition, strings.Join(s.parts.names(), ", "))
	}
	if spec.Nodes == 0 {
		spec.Nodes = 1
	}
	if spec.Name == "" {
		spec.Name = "script"
	}
	if spec.TimeLimit == 0 {
		spec.TimeLimit = part.DefaultTime
		if spec.TimeLimit == 0 {
			spec.TimeLimit = part.MaxTime // Slurm: no DefaultTime means MaxTime
		}
	}
	if part.MaxTime > 0 && spec.TimeLimit > part.MaxTime {
		return bad("time limit %s is over partition %s's MaxTime of %s", config.FormatTime(spec.TimeLimit), part.Name, config.FormatTime(part.MaxTime))
	}
	known := s.nodesOfLocked(part.Name)
	if spec.MemBytes == 0 {
		spec.MemBytes = int64(spec.CPUs) * memPerCPU(part, known)
	}
	return fitsSomewhere(spec, part.Name, known)
}

// memPerCPU is the partition's DefMemPerCPU, else the smallest memory per
// CPU among its known nodes (a default job then fits any of them), else
// 1 GiB.
func memPerCPU(part api.Partition, known []*node) int64 {
	if part.DefaultMemPerCPU > 0 {
		return part.DefaultMemPerCPU
	}
	var best int64
	for _, n := range known {
		if n.rec.CPUs < 1 {
			continue
		}
		if ratio := n.rec.MemBytes / int64(n.rec.CPUs); best == 0 || ratio < best {
			best = ratio
		}
	}
	if best == 0 {
		return defaultMemPerCPU
	}
	return best
}

// fitsSomewhere rejects a job that no known node of its partition could
// ever hold. With no known node yet anything is accepted: nodes may
// register later.
func fitsSomewhere(spec *api.JobSpec, part string, known []*node) error {
	if len(known) == 0 {
		return nil
	}
	var maxCPUs int
	var maxMem int64
	fit := 0
	for _, n := range known {
		maxCPUs = max(maxCPUs, n.rec.CPUs)
		maxMem = max(maxMem, n.rec.MemBytes)
		if spec.CPUs <= n.rec.CPUs && spec.MemBytes <= n.rec.MemBytes {
			fit++
		}
	}
	never := func(format string, args ...any) error {
		return errorf(http.StatusBadRequest, "%s: it could never run", fmt.Sprintf(format, args...))
	}
	switch {
	case spec.CPUs > maxCPUs:
		return never("job asks for %d CPUs per node but the largest node in partition %s has %d", spec.CPUs, part, maxCPUs)
	case spec.MemBytes > maxMem:
		return never("job asks for %s memory per node but the largest node in partition %s has %s",
			config.FormatSize(spec.MemBytes), part, config.FormatSize(maxMem))
	case fit == 0:
		return never("job asks for %d CPUs and %s memory per node but no node in partition %s has both",
			spec.CPUs, config.FormatSize(spec.MemBytes), part)
	case fit < spec.Nodes:
		return never("job asks for %d nodes but partition %s has %d that can hold it", spec.Nodes, part, fit)
	}
	return nil
}
