//go:build !slurmonly

package cli

import (
	"sort"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

func policyCommand() *ucli.Command {
	limitFlags := []ucli.Flag{
		&ucli.StringFlag{Name: "max-running-jobs", Usage: "jobs running at once"},
		&ucli.StringFlag{Name: "max-pending-jobs", Usage: "jobs waiting at once (more are refused at submit)"},
		&ucli.StringFlag{Name: "max-cpus", Usage: "CPUs in use at once"},
		&ucli.StringFlag{Name: "max-mem", Usage: "memory in use at once (e.g. 64G)"},
		&ucli.StringFlag{Name: "max-fgpu", Usage: "fGPU in use at once (e.g. 1.5)"},
		&ucli.StringFlag{Name: "max-cpus-per-job", Usage: "CPUs one job may ask for"},
		&ucli.StringFlag{Name: "max-mem-per-job", Usage: "memory one job may ask for"},
		&ucli.StringFlag{Name: "max-fgpu-per-job", Usage: "fGPU one job may ask for"},
		socketFlag(),
	}
	return &ucli.Command{
		Name:  "policy",
		Usage: "show or set per-user and per-account resource policies (setting: admins)",
		Subcommands: []*ucli.Command{
			{Name: "list", Aliases: []string{"ls"}, Usage: "list the policies", UsageText: "corral policy list [--json]",
				Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print JSON"}, socketFlag()}, Action: listPolicies},
			{Name: "set", Usage: "set limits (0 removes one; limits not named are kept; none left removes the policy)",
				UsageText: "corral policy set user|account NAME [--max-cpus N] [--max-mem SIZE] ...",
				Flags:     limitFlags, Action: setPolicy},
			{Name: "rm", Usage: "remove a policy", UsageText: "corral policy rm user|account NAME",
				Flags: []ucli.Flag{socketFlag()}, Action: removePolicy},
		},
	}
}

func listPolicies(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	ps, err := client(c, "").Policies(ctx)
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []api.Policy{}
	}
	sort.Slice(ps, func(i, j int) bool {
		return ps[i].Kind+"/"+ps[i].Name < ps[j].Kind+"/"+ps[j].Name
	})
	if c.Bool("json") {
		return writeJSON(out(c), ps)
	}
	rows := make([][]string, 0, len(ps))
	n := func(v int) string { return limitText(int64(v), strconv.FormatInt) }
	for _, p := range ps {
		l := p.Limits
		rows = append(rows, []string{p.Kind, p.Name, n(l.MaxRunningJobs), n(l.MaxPendingJobs), n(l.MaxCPUs),
			limitText(l.MaxMemBytes, sizeText), limitText(int64(l.MaxFGPU), fgpuText),
			n(l.MaxCPUsPerJob), limitText(l.MaxMemPerJob, sizeText), limitText(int64(l.MaxFGPUPerJob), fgpuText)})
	}
	return writeTable(out(c), []string{"KIND", "NAME", "RUNNING", "PENDING", "CPUS", "MEM", "FGPU", "CPUS/JOB", "MEM/JOB", "FGPU/JOB"}, rows)
}

func limitText(v int64, f func(int64, int) string) string {
	if v == 0 {
		return "-"
	}
	return f(v, 10)
}

func sizeText(v int64, _ int) string { return formatSize(v) }
func fgpuText(v int64, _ int) string { return formatFGPU(v) }

// policyTarget reads "user|account NAME".
func policyTarget(c *ucli.Context) (api.Policy, error) {
	if c.NArg() != 2 {
		return api.Policy{}, usageErrorf("expected user|account NAME")
	}
	kind, name := c.Args().Get(0), c.Args().Get(1)
	if kind != api.PolicyUser && kind != api.PolicyAccount {
		return api.Policy{}, usageErrorf("invalid policy kind %q: use user or account", kind)
	}
	if name == "" {
		return api.Policy{}, usageErrorf("the policy's NAME must not be empty")
	}
	return api.Policy{Kind: kind, Name: name}, nil
}

func setPolicy(c *ucli.Context) error {
	p, err := policyTarget(c)
	if err != nil {
		return err
	}
	var probe api.Limits // the flags are checked before anything is sent
	if err := applyLimitFlags(c, &probe); err != nil {
		return err
	}
	named := false
	for _, f := range c.FlagNames() {
		named = named || strings.HasPrefix(f, "max-")
	}
	if !named {
		return usageErrorf("no limits given; name at least one (--max-cpus N, ...) or use corral policy rm")
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	cl := client(c, "")
	existing, err := cl.Policies(ctx)
	if err != nil {
		return err
	}
	for _, e := range existing {
		if e.Kind == p.Kind && e.Name == p.Name {
			p.Limits = e.Limits
		}
	}
	if err := applyLimitFlags(c, &p.Limits); err != nil {
		return err
	}
	return cl.SetPolicy(ctx, p)
}

func removePolicy(c *ucli.Context) error {
	p, err := policyTarget(c)
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	return client(c, "").SetPolicy(ctx, p)
}

// applyLimitFlags sets the limits named on the command line.
func applyLimitFlags(c *ucli.Context, l *api.Limits) error {
	count := func(flag string, dst *int) error {
		if !c.IsSet(flag) {
			return nil
		}
		v, err := strconv.Atoi(c.String(flag))
		if err != nil || v < 0 {
			return usageErrorf("invalid --%s %q: use a whole number, 0 for no limit", flag, c.String(flag))
		}
		*dst = v
		return nil
	}
	size := func(flag string, dst *int64) error {
		if !c.IsSet(flag) {
			return nil
		}
		if c.String(flag) == "0" {
			*dst = 0
			return nil
		}
		v, err := jobspec.ParseSize(c.String(flag))
		if err != nil || v < 0 {
			return usageErrorf("invalid --%s %q: use a size like 64G, 0 for no limit", flag, c.String(flag))
		}
		*dst = v
		return nil
	}
	fgpu := func(flag string, dst *int) error {
		if !c.IsSet(flag) {
			return nil
		}
		f, err := strconv.ParseFloat(c.String(flag), 64)
		if err != nil || f < 0 || f > 1e6 {
			return usageErrorf("invalid --%s %q: use an amount like 1.5, 0 for no limit", flag, c.String(flag))
		}
		*dst = int(f*100 + 0.5)
		return nil
	}
	for _, err := range []error{
		count("max-running-jobs", &l.MaxRunningJobs), count("max-pending-jobs", &l.MaxPendingJobs),
		count("max-cpus", &l.MaxCPUs), size("max-mem", &l.MaxMemBytes), fgpu("max-fgpu", &l.MaxFGPU),
		count("max-cpus-per-job", &l.MaxCPUsPerJob), size("max-mem-per-job", &l.MaxMemPerJob),
		fgpu("max-fgpu-per-job", &l.MaxFGPUPerJob),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
