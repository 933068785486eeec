package ctld

import (
	"fmt"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/jobspec"
)

// Update: scontrol update job's verb. A job's owner may lower its time
// limit and change its nice and name; root may raise the limit and set a
// negative nice; admins may change anyone's job.

// update changes the time limit, nice or name of a pending or running job
// (every unfinished task of an array job).
func (s *Server) update(caller peer, req api.UpdateRequest) (api.JobsResponse, error) {
	bad := func(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }
	switch {
	case req.ID == 0:
		return api.JobsResponse{}, bad("update: give a job ID")
	case req.TimeLimit == nil && req.Nice == nil && req.Name == nil:
		return api.JobsResponse{}, bad("update: nothing to change: give TimeLimit, Nice or Name")
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
	return ""
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
	return strings.Join(parts, " ")
}
