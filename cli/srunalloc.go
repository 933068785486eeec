package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
)

// runSrunAllocation is srun outside an allocation: it makes one from its
// options (as salloc would), runs the step in it and releases it with
// the step's exit status, which it returns.
func runSrunAllocation(ctx context.Context, env srunEnv, cfg *srunConfig) int {
	req, _, err := jobspec.ParseAllocation(cfg.allocationArgs(), nil, time.Now())
	if err != nil {
		fmt.Fprintf(env.stderr, "srun: error: %s\n", oneLine(err.Error()))
		return 1
	}
	for _, w := range req.Warnings {
		fmt.Fprintf(env.stderr, "srun: warning: %s\n", w)
	}
	spec, err := allocSpec(req.Spec)
	if err != nil {
		fmt.Fprintf(env.stderr, "srun: error: %s\n", oneLine(err.Error()))
		return 1
	}
	a, err := allocate(ctx, "srun", env.client(), env.stderr, spec, true, cfg.immediate)
	if errors.Is(err, errRevoked) {
		return 1
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "srun: error: Unable to allocate resources: %s\n", oneLine(err.Error()))
		return 1
	}
	code := runStep(ctx, env, cfg, a.id)
	a.release(code)
	return code
}

// allocationArgs are the allocation's options in sbatch's spelling: the
// step's counts and nodes (-w, -x) as srun settled them, and the options
// only an allocation takes. The job is named after the step.
func (cfg *srunConfig) allocationArgs() []string {
	r := &cfg.req
	var args []string
	nodes := r.Nodes
	if r.NodesMin > 0 {
		nodes = r.NodesMin // corral allocates a range's minimum
	}
	for _, o := range []struct {
		name string
		n    int
	}{{"nodes", nodes}, {"ntasks", r.Ntasks}, {"ntasks-per-node", r.NtasksPerNode},
		{"cpus-per-task", r.CPUsPerTask}, {"gpus-per-task", r.GPUsPerTask}} {
		if o.n > 0 {
			args = append(args, "--"+o.name+"="+strconv.Itoa(o.n))
		}
	}
	for _, o := range []struct {
		name  string
		nodes []string
	}{{"nodelist", r.NodeList}, {"exclude", r.Exclude}} {
		if len(o.nodes) > 0 {
			args = append(args, "--"+o.name+"="+hostlist.Compress(o.nodes))
		}
	}
	switch {
	case r.MemBytes > 0:
		args = append(args, fmt.Sprintf("--mem=%dK", (r.MemBytes+1023)/1024))
	case cfg.memAll:
		args = append(args, "--mem=0")
	}
	if cfg.exclusive != "" {
		args = append(args, cfg.exclusive)
	}
	args = append(args, "--job-name="+jobspec.DefaultJobName(r.Name))
	return append(args, cfg.allocArgs...)
}
