package ctld

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/jobspec"
)

// Update: scontrol update job's verb. A job's owner may lower its time
// limit and change its nice and name; root may raise the limit and set a
// negative nice; admins may change anyone's job.

// update changes the time limit, nice, name or comment of a pending or
// running job (every unfinished task of an array job), and what a
// waiting job asks for (admission.respec).
func (s *Server) update(caller peer, req api.UpdateRequest) (api.JobsResponse, error) {
	bad := func(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }
	switch {
	case req.ID == 0:
		return api.JobsResponse{}, bad("update: give a job ID")
	case req.ArrayTaskThrottle != nil && (*req.ArrayTaskThrottle < 0 || req.Task != nil):
		return api.JobsResponse{}, bad("update: ArrayTaskThrottle is a number from 0 (no limit), for an array job's own ID")
	case req.TimeLimit == nil && req.Nice == nil && req.Name == nil && req.Comment == nil && req.ArrayTaskThrottle == nil && !req.ChangesSpec():
		return api.JobsResponse{}, bad("update: nothing to change: give %s", updateKeys)
	case req.TimeLimit != nil && *req.TimeLimit < 0:
		return api.JobsResponse{}, bad("update: TimeLimit must not be negative")
	case req.Name != nil && !jobspec.ValidJobName(*req.Name):
		return api.JobsResponse{}, bad("update: %v", jobspec.CheckJobName(*req.Name))
	case req.Nice != nil && (*req.Nice < -2147483645 || *req.Nice > 2147483645):
		return api.JobsResponse{}, bad("update: Nice must be within ±2147483645")
	case req.Nice != nil && *req.Nice < 0 && caller.UID != 0:
		return api.JobsResponse{}, fault.Errorf(fault.Forbidden, "update: only root may set a negative Nice")
	}
	ref := jobRef{id: req.ID, task: req.Task}
	resp := api.JobsResponse{Done: []string{}}
	s.mu.Lock()
	jobs, rem, msg := s.q.resolve(ref)
	if msg == "" && req.ArrayTaskThrottle != nil && rem == nil {
		msg = fmt.Sprintf("job %s is not an array job: ArrayTaskThrottle is for array jobs", ref)
	}
	var changes []change
	var rems []remChange
	for _, j := range jobs {
		if msg != "" {
			break
		}
		if j.state().Terminal() {
			if rem == nil {
				msg = fmt.Sprintf("job %s already finished (%s)", ref, j.state())
			}
			continue
		}
		next := j.rec
		if msg = s.updateJobLocked(caller, req, &next.Job); msg == "" {
			if req.TimeLimit != nil && j.state() == api.StateRunning {
				next.EnforceTimeLimit = true
			}
			changes = append(changes, change{j, next})
		}
	}
	if r := rem.pendingRem(); msg == "" && r != nil {
		next := *r
		if msg = s.updateJobLocked(caller, req, &next); msg == "" {
			rems = append(rems, rem.withRemJob(next))
		}
	}
	if msg == "" && len(changes)+len(rems) == 0 {
		msg = fmt.Sprintf("job %s has nothing left to update", ref)
	}
	var err error
	if msg == "" {
		err = s.q.commit(changes, rems)
	}
	if err == nil && msg == "" && req.ArrayTaskThrottle != nil {
		rem.maxRunning = *req.ArrayTaskThrottle // its records carry it too (updateJobLocked)
	}
	s.mu.Unlock()
	if err != nil {
		return api.JobsResponse{}, err
	}
	if msg != "" {
		resp.Errors = map[string]string{ref.String(): msg}
		return resp, nil
	}
	resp.Done = append(resp.Done, ref.String())
	s.log.Printf("update job %s by %s: %s", ref, s.users.name(caller.UID), describeUpdate(req))
	s.Kick()
	return resp, nil
}

// updateJobLocked applies req to job, or says why not.
func (s *Server) updateJobLocked(caller peer, req api.UpdateRequest, job *api.Job) string {
	ref := api.JobRefText(job)
	if !s.gate.MayModify(caller.caller(), job.UID) {
		return fmt.Sprintf("job %s belongs to %s", ref, job.User)
	}
	if req.TimeLimit != nil {
		limit := *req.TimeLimit
		lower := job.TimeLimit == 0 && limit > 0 || limit <= job.TimeLimit && limit > 0
		switch {
		case caller.UID != 0 && !lower:
			return fmt.Sprintf("job %s: you may only lower the time limit (it is %s)", ref, formatLimit(job.TimeLimit))
		case job.State == api.StateRunning && !lower:
			return fmt.Sprintf("job %s is running: its time limit can only be lowered", ref)
		}
		job.TimeLimit = limit
		job.Spec.TimeLimit, job.Spec.TimeUnlimited = limit, limit == 0
	}
	if req.Nice != nil {
		job.Spec.Nice = *req.Nice
	}
	if req.Name != nil {
		job.Name, job.Spec.Name = *req.Name, *req.Name
	}
	if req.Comment != nil {
		job.Spec.Comment = *req.Comment
	}
	if req.ArrayTaskThrottle != nil && job.Spec.Array != nil {
		a := *job.Spec.Array // shared with the old record: a copy
		a.MaxRunning = *req.ArrayTaskThrottle
		job.Spec.Array = &a
	}
	if req.ChangesSpec() {
		owner := account{UID: job.UID, GID: job.GID, Name: job.User, Groups: job.Groups}
		return (&admission{s: s, caller: caller, owner: owner, now: time.Now()}).respec(req, job)
	}
	return ""
}

// updateKeys names what an update may change, as scontrol spells it.
const updateKeys = "TimeLimit, Nice, Name, Comment, ArrayTaskThrottle, and while the job waits Partition, Dependency, StartTime, Account, QOS, " +
	"Features, ReqNodeList, ExcNodeList, MinMemoryNode, MinMemoryCPU or Requeue"

// respec applies req's changes to a waiting job's request and admits
// the job again, as a submit would be, with its owner's rights: the
// controller's view of its partition, size and placement follows the new
// request. It says why not, or "". The caller holds s.mu.
func (a *admission) respec(req api.UpdateRequest, job *api.Job) string {
	ref := api.JobRefText(job)
	if job.State != api.StatePending {
		return fmt.Sprintf("job %s is %s: Partition, Dependency, StartTime, Account, QOS, Features, node lists, memory and Requeue change only while it waits", ref, job.State)
	}
	spec := job.Spec
	if err := applySpecUpdate(req, &spec); err != nil {
		return fmt.Sprintf("job %s: %v", ref, err)
	}
	admitted, err := a.admit(spec)
	if err != nil {
		return fmt.Sprintf("job %s: %v", ref, err)
	}
	job.Partition, job.CPUs, job.MemBytes, job.NodeCount = admitted.Partition, admitted.CPUs, admitted.MemBytes, admitted.Nodes
	job.TimeLimit, job.Spec = admitted.TimeLimit, admitted
	gpuRequestOf(&admitted).apply(job)
	return ""
}

// applySpecUpdate writes req's request changes into spec.
func applySpecUpdate(req api.UpdateRequest, spec *api.JobSpec) error {
	if req.Partition != nil {
		spec.Partition = *req.Partition
	}
	if req.Dependency != nil {
		spec.Dependency = nil
		if *req.Dependency != "" {
			d, _, err := jobspec.ParseDependency(*req.Dependency)
			if err != nil {
				return err
			}
			spec.Dependency = d
		}
	}
	if req.Begin != nil {
		spec.Begin = nil
		if !req.Begin.IsZero() {
			t := *req.Begin
			spec.Begin = &t
		}
	}
	if req.Account != nil {
		spec.Account = *req.Account
	}
	if req.QOS != nil {
		spec.QOS = *req.QOS
	}
	if req.Constraint != nil {
		spec.Constraint = *req.Constraint
	}
	if req.NodeList != nil {
		spec.NodeList = *req.NodeList
	}
	if req.Exclude != nil {
		spec.Exclude = *req.Exclude
	}
	switch {
	case req.MemBytes != nil && req.MemPerCPU != nil:
		return fmt.Errorf("MinMemoryNode and MinMemoryCPU exclude each other")
	case req.MemBytes != nil:
		spec.MemBytes, spec.MemPerCPU, spec.MemWholeNode = *req.MemBytes, 0, *req.MemBytes == 0
	case req.MemPerCPU != nil:
		if *req.MemPerCPU <= 0 {
			return fmt.Errorf("MinMemoryCPU must be above 0")
		}
		spec.MemPerCPU, spec.MemBytes, spec.MemWholeNode = *req.MemPerCPU, *req.MemPerCPU*int64(max(spec.CPUs, 1)), false
	}
	if req.Requeue != nil {
		v := *req.Requeue
		spec.Requeue = &v
	}
	return nil
}

func formatLimit(s int64) string {
	if s == 0 {
		return "UNLIMITED"
	}
	return config.FormatTime(s)
}

func describeUpdate(req api.UpdateRequest) string {
	var parts []string
	if req.TimeLimit != nil {
		parts = append(parts, "TimeLimit="+formatLimit(*req.TimeLimit))
	}
	if req.Nice != nil {
		parts = append(parts, fmt.Sprintf("Nice=%d", *req.Nice))
	}
	if req.Name != nil {
		parts = append(parts, "Name="+*req.Name)
	}
	if req.Comment != nil {
		parts = append(parts, "Comment="+*req.Comment)
	}
	if req.ArrayTaskThrottle != nil {
		parts = append(parts, fmt.Sprintf("ArrayTaskThrottle=%d", *req.ArrayTaskThrottle))
	}
	for _, f := range []struct {
		key string
		v   *string
	}{{"Partition", req.Partition}, {"Dependency", req.Dependency}, {"Account", req.Account}, {"QOS", req.QOS}, {"Features", req.Constraint}} {
		if f.v != nil {
			parts = append(parts, f.key+"="+*f.v)
		}
	}
	if req.Begin != nil {
		parts = append(parts, "StartTime="+req.Begin.Format(time.RFC3339))
	}
	if req.NodeList != nil {
		parts = append(parts, "ReqNodeList="+strings.Join(*req.NodeList, ","))
	}
	if req.Exclude != nil {
		parts = append(parts, "ExcNodeList="+strings.Join(*req.Exclude, ","))
	}
	if req.MemBytes != nil {
		parts = append(parts, "MinMemoryNode="+config.FormatSize(*req.MemBytes))
	}
	if req.MemPerCPU != nil {
		parts = append(parts, "MinMemoryCPU="+config.FormatSize(*req.MemPerCPU))
	}
	if req.Requeue != nil {
		parts = append(parts, fmt.Sprintf("Requeue=%v", *req.Requeue))
	}
	return strings.Join(parts, " ")
}
