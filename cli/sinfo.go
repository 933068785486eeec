package cli

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const sinfoUsage = `Usage: sinfo [OPTIONS]
  -d, --dead                only nodes that are down
  -h, --noheader            no header line
  -i, --iterate=seconds     report again every so many seconds, until stopped
  -l, --long                long report
  -n, --nodes=hostlist      only these nodes
  -N, --Node                one line per node (and partition)
  -o, --format=format       format specification (%P %a %l %D %t %N ...)
  -O, --Format=format       format by field names (Partition,Nodes:10,...)
  -p, --partition=list      only these partitions
  -r, --responding          only nodes that are up
  -R, --list-reasons        why nodes are down or drained
  -s, --summarize           one line per partition, nodes as A/I/O/T
  -S, --sort=list           order lines by format letters (+P,-m; #P as configured)
  -t, --states=list         only nodes in these states (idle, mix, alloc, down, drain, ...)
      --json                corral's partitions and nodes as JSON
  -V, --version             version
      --help                this help
Accepted and ignored: -a, -e, -v, --local, --federation. See docs/slurm.md.
`

func sinfoCommand() *slurmCommand {
	return &slurmCommand{
		usage: sinfoUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'a', Long: "all"},
			slurmopt.Option{Short: 'd', Long: "dead"},
			slurmopt.Option{Short: 'e', Long: "exact"},
			slurmopt.Option{Short: 'h', Long: "noheader"},
			slurmopt.Option{Short: 'l', Long: "long"},
			slurmopt.Option{Short: 'n', Long: "nodes", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'N', Long: "Node"},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'O', Long: "Format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'p', Long: "partition", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'r', Long: "responding"},
			slurmopt.Option{Short: 'R', Long: "list-reasons"},
			slurmopt.Option{Short: 's', Long: "summarize"},
			slurmopt.Option{Short: 't', Long: "states", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "json"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
			slurmopt.Option{Long: "local"}, slurmopt.Option{Long: "federation"},
			// corral has no hidden partitions, and prints sizes as they are.
			slurmopt.Option{Long: "hide"}, slurmopt.Option{Long: "noconvert"},
			clusterOptions[0], clusterOptions[1],
			slurmopt.Option{Short: 'T', Long: "reservation"},
			slurmopt.Option{Short: 'S', Long: "sort", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'i', Long: "iterate", Arg: slurmopt.RequiredArg},
		),
		run: sinfo,
	}
}

func sinfo(s *slurmRun, r *slurmopt.Result) error {
	if len(r.Args) > 0 {
		return slurmUsagef("Unrecognized option: %s", r.Args[0])
	}
	cluster, err := clustersGiven(r) // clusters.go
	if err != nil {
		return err
	}
	if r.Has("reservation") { // sinfo -T: corral has none
		_, err := s.stdout.WriteString("No reservations in the system\n")
		return err
	}
	format, names := slurmfmt.SinfoDefault, false
	perNode := r.Has("Node")
	switch {
	case r.Has("Format"):
		format, _ = r.Last("Format")
		names = true
	case r.Has("format"):
		format, _ = r.Last("format")
	case r.Has("list-reasons"):
		format = slurmfmt.SinfoReasons
	case r.Has("summarize"):
		format = slurmfmt.SinfoSummarize
	case perNode && r.Has("long"):
		format = slurmfmt.SinfoNodesLong
	case perNode:
		format = slurmfmt.SinfoNodes
	case r.Has("long"):
		format = slurmfmt.SinfoLong
	}
	every := 0 // -i: seconds between reports, 0 for one
	if v, ok := r.Last("iterate"); ok {
		if every, err = strconv.Atoi(leadingDigits(v)); err != nil || every <= 0 { // Slurm's atoi
			return slurmErrorf("Error: invalid entry for --iterate=%s", v)
		}
	}
	layout, unknown := slurmfmt.NewNodeLayout(format, names)
	for _, u := range unknown {
		fmt.Fprintf(s.stderr, "%s: error: Invalid node format specification: %s\n", s.prog, u)
	}
	for {
		if err := sinfoReport(s, r, layout, perNode, cluster, every > 0); err != nil || every == 0 {
			return err
		}
		s.stdout.WriteByte('\n')
		if err := s.stdout.Flush(); err != nil {
			return err
		}
		select { // as sinfo -i: until it is stopped
		case <-s.ctx.Done():
			return nil
		case <-time.After(time.Duration(every) * time.Second):
		}
	}
}

// sinfoReport prints one report: dated when long or repeated.
func sinfoReport(s *slurmRun, r *slurmopt.Result, layout *slurmfmt.NodeLayout, perNode, cluster, dated bool) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	parts, nodes, err := partitionsAndNodes(ctx, s.client()) // scontrol.go
	if err != nil {
		return err
	}
	if want := commaList(r.All("partition")); len(want) > 0 {
		parts = slices.DeleteFunc(parts, func(p api.Partition) bool { return !slices.Contains(want, p.Name) })
	}
	if nodes, err = sinfoNodes(r, nodes); err != nil {
		return err
	}
	if r.Has("json") {
		return writeJSON(s.stdout, map[string]any{"partitions": parts, "nodes": nodes})
	}
	env := &slurmfmt.Env{Now: time.Now()}
	groups := layout.Group(parts, nodes, perNode, env)
	if spec, ok := r.Last("sort"); ok {
		slurmfmt.SortNodeGroups(groups, spec, env)
	}
	if r.Has("list-reasons") {
		groups = slices.DeleteFunc(groups, func(g slurmfmt.NodeGroup) bool { return len(g.Nodes) == 0 || g.Nodes[0].Reason == "" })
	}
	if (dated || r.Has("long")) && !r.Has("noheader") {
		s.stdout.WriteString(slurmfmt.Ctime(env.Now)) // sinfo dates a long or repeated report
	}
	if cluster && !r.Has("noheader") {
		s.stdout.WriteString(clusterLine)
	}
	for _, line := range layout.Lines(groups, r.Has("noheader"), env) {
		s.stdout.WriteString(line)
		s.stdout.WriteByte('\n')
	}
	return nil
}

// sinfoNodes keeps the nodes that pass -n, -t, -d and -r.
func sinfoNodes(r *slurmopt.Result, nodes []api.Node) ([]api.Node, error) {
	var only []string
	for _, expr := range r.All("nodes") {
		names, err := hostlist.Expand(expr)
		if err != nil {
			return nil, fmt.Errorf("invalid node list %s: %v", expr, err)
		}
		only = append(only, names...)
	}
	states := commaList(r.All("states"))
	return slices.DeleteFunc(nodes, func(n api.Node) bool {
		if only != nil && !slices.Contains(only, n.Name) ||
			r.Has("dead") && n.State != api.NodeDown ||
			r.Has("responding") && n.State == api.NodeDown {
			return true
		}
		return len(states) > 0 && !slices.ContainsFunc(states, func(st string) bool { return slurmfmt.NodeStateMatches(&n, st) })
	}), nil
}
