package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// parseUpdate reads `ID KEY=VALUE...` (or JobId=ID KEY=VALUE...), the
// arguments of corral update and scontrol update: one request per job of
// ID, which may be a comma-separated list as in scontrol. Every ID is
// checked before any request is made.
func parseUpdate(args []string) ([]api.UpdateRequest, error) {
	req, err := parseUpdateKeys(args)
	if err != nil {
		return nil, err
	}
	var reqs []api.UpdateRequest
	for ref := range strings.SplitSeq(req.idText, ",") {
		id, task, err := api.ParseJobRef(ref)
		if err != nil {
			return nil, err
		}
		r := req.UpdateRequest
		r.ID, r.Task = id, task
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// parsedUpdate is an update's keys, and the job IDs as given.
type parsedUpdate struct {
	api.UpdateRequest
	idText string
}

func parseUpdateKeys(args []string) (parsedUpdate, error) {
	var req parsedUpdate
	// JobId=ID may come anywhere among the keys, as scontrol takes it; a
	// bare first word is the ID too.
	idAt := 0
	for i, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && strings.EqualFold(k, "JobId") {
			idAt = i
			break
		}
	}
	first := args[idAt]
	if k, v, ok := strings.Cut(first, "="); ok && strings.EqualFold(k, "JobId") {
		first = v
	}
	req.idText = first
	var err error
	str := func(v string) *string { return &v }
	nodes := func(key, v string) (*[]string, error) {
		list := []string{}
		if v != "" {
			var err error
			if list, err = jobspec.NodeNames(key, v); err != nil {
				return nil, err
			}
		}
		return &list, nil
	}
	for i, a := range args {
		if i == idAt {
			continue
		}
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return req, fmt.Errorf("%q is not KEY=VALUE (keys: %s)", a, jobUpdateKeys)
		}
		switch strings.ToLower(k) {
		case "timelimit":
			n, err := jobspec.ParseTimeLimit(v)
			if err != nil {
				return req, fmt.Errorf("invalid TimeLimit=%s: use M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED", v)
			}
			req.TimeLimit = &n
		case "nice":
			n, err := strconv.Atoi(v)
			if err != nil {
				return req, fmt.Errorf("invalid Nice=%s: give a whole number", v)
			}
			req.Nice = &n
		case "name", "jobname":
			if v == "" {
				return req, slurmError("Name must not be empty")
			}
			req.Name = str(v)
		case "comment":
			req.Comment = str(v)
		case "arraytaskthrottle":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return req, fmt.Errorf("invalid ArrayTaskThrottle=%s: give a number from 0 (no limit)", v)
			}
			req.ArrayTaskThrottle = &n
		case "partition":
			req.Partition = str(v)
		case "dependency":
			req.Dependency = str(v)
		case "starttime", "begintime", "eligibletime":
			var t time.Time
			if v != "" && !strings.EqualFold(v, "none") {
				if t, err = jobspec.ParseBegin(v, time.Now()); err != nil {
					return req, fmt.Errorf("invalid %s=%s: %v", k, v, err)
				}
			}
			req.Begin = &t
		case "account":
			req.Account = str(v)
		case "qos":
			req.QOS = str(v)
		case "features":
			req.Constraint = str(v)
		case "reqnodelist", "nodelist":
			if req.NodeList, err = nodes("nodelist", v); err != nil {
				return req, err
			}
		case "excnodelist":
			if req.Exclude, err = nodes("exclude", v); err != nil {
				return req, err
			}
		case "minmemorynode", "minmemorycpu":
			n, err := jobspec.ParseSize(v)
			if err != nil {
				return req, fmt.Errorf("invalid %s=%s: %v", k, v, err)
			}
			if strings.EqualFold(k, "minmemorynode") {
				req.MemBytes = &n
			} else {
				req.MemPerCPU = &n
			}
		case "requeue":
			on := v == "1" || strings.EqualFold(v, "yes")
			if !on && v != "0" && !strings.EqualFold(v, "no") {
				return req, fmt.Errorf("invalid Requeue=%s: give 0 or 1", v)
			}
			req.Requeue = &on
		default:
			return req, fmt.Errorf("unknown key %s (keys: %s)", k, jobUpdateKeys)
		}
	}
	return req, nil
}

// jobUpdateKeys are the keys of scontrol update job.
const jobUpdateKeys = "TimeLimit, Nice, Name, Comment, ArrayTaskThrottle, Partition, Dependency, StartTime, Account, QOS, Features, " +
	"ReqNodeList, ExcNodeList, MinMemoryNode, MinMemoryCPU, Requeue"

// refLess orders 9 before 10 and 12 before 12_3.
func refLess(a, b string) bool {
	ai, at, _ := api.ParseJobRef(a)
	bi, bt, _ := api.ParseJobRef(b)
	switch {
	case ai != bi:
		return ai < bi
	case at == nil || bt == nil:
		return at == nil && bt != nil
	}
	return *at < *bt
}

// updateJobs sends reqs one by one, as scontrol updates a list of jobs,
// and gathers the refusals of all; a failure to reach the controller
// stops it.
func updateJobs(ctx context.Context, cl *api.Client, reqs []api.UpdateRequest) (*api.JobsResponse, error) {
	all := &api.JobsResponse{}
	for _, req := range reqs {
		resp, err := cl.Update(ctx, req)
		if err != nil {
			return nil, err
		}
		all.Done = append(all.Done, resp.Done...)
		for ref, why := range resp.Errors {
			if all.Errors == nil {
				all.Errors = map[string]string{}
			}
			all.Errors[ref] = why
		}
		all.ErrorCount += resp.ErrorCount
	}
	return all, nil
}
