package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// parseUpdate reads `ID KEY=VALUE...` (or JobId=ID KEY=VALUE...), the
// arguments of corral update and scontrol update.
func parseUpdate(args []string) (api.UpdateRequest, error) {
	var req api.UpdateRequest
	first := args[0]
	if k, v, ok := strings.Cut(first, "="); ok && strings.EqualFold(k, "JobId") {
		first = v
	}
	id, task, err := api.ParseJobRef(first)
	if err != nil {
		return req, err
	}
	req = api.UpdateRequest{ID: id, Task: task}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return req, fmt.Errorf("%q is not KEY=VALUE (keys: TimeLimit, Nice, Name)", a)
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
			name := v
			req.Name = &name
		default:
			return req, fmt.Errorf("unknown key %s (keys: TimeLimit, Nice, Name)", k)
		}
	}
	return req, nil
}

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
