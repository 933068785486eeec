package cli

import (
	"fmt"
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const sprioUsage = `Usage: sprio [OPTIONS]
  -h, --noheader        no header line
  -j, --jobs=list       only these jobs
  -l, --long            add the user, account and nice
  -n, --norm            factors normalized (0 to 1) instead of weighted
  -o, --format=format   format specification (%i %r %u %o %Y %y %A %a %F %f %J %j %N)
  -p, --partition=list  only these partitions
  -S, --sort=fields     sort order (as corral prio -S)
  -u, --user=list       only these users
  -w, --weights         the configured weights
  -V, --version         version
      --help            this help
Accepted and ignored: -v. See docs/slurm.md.
`

func sprioCommand() *slurmCommand {
	return &slurmCommand{
		usage: sprioUsage,
		opts: withCommon(
			clusterOptions[0], clusterOptions[1],
			slurmopt.Option{Short: 'h', Long: "noheader"},
			slurmopt.Option{Short: 'j', Long: "jobs", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'l', Long: "long"},
			slurmopt.Option{Short: 'n', Long: "norm"},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'p', Long: "partition", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'S', Long: "sort", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'u', Long: "user", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'w', Long: "weights"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
			slurmopt.Option{Long: "local"}, slurmopt.Option{Long: "federation"}, // one cluster: changes nothing
		),
		run: sprio,
	}
}

func sprio(s *slurmRun, r *slurmopt.Result) error {
	if _, err := clustersGiven(r); err != nil { // clusters.go: one cluster, nothing to filter
		return err
	}
	if len(r.Args) > 0 {
		return slurmUsagef("Unrecognized option: %s", r.Args[0])
	}
	sortSpec, _ := r.Last("sort")
	keys, err := parsePrioSort(sortSpec) // prio.go
	if err != nil {
		return err
	}
	ids, err := parseJobIDs(commaList(r.All("jobs"))) // queue.go
	if err != nil {
		return err
	}
	users := dedupe(commaList(r.All("user")))
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := s.client().Prio(ctx, api.PrioFilter{Users: users, IDs: ids})
	if err != nil {
		return err
	}
	if parts := commaList(r.All("partition")); len(parts) > 0 {
		resp.Jobs = slices.DeleteFunc(resp.Jobs, func(j api.JobPrio) bool { return !slices.Contains(parts, j.Partition) })
	}
	sortPrio(resp.Jobs, keys)
	format := slurmfmt.SprioFormat(resp.Weights, len(users) > 0, r.Has("long"), r.Has("norm"))
	if v, ok := r.Last("format"); ok {
		format = v
	}
	layout, unknown := slurmfmt.NewPrioLayout(format)
	for _, u := range unknown {
		fmt.Fprintf(s.stderr, "%s: error: Invalid job format specification: %s\n", s.prog, u)
	}
	if !r.Has("noheader") {
		fmt.Fprintln(s.stdout, layout.Header())
	}
	if r.Has("weights") {
		_, err := fmt.Fprintln(s.stdout, layout.Weights(resp.Weights))
		return err
	}
	for i := range resp.Jobs {
		fmt.Fprintln(s.stdout, layout.Row(&resp.Jobs[i]))
	}
	return nil
}
