//go:build !slurmonly

package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

func nodesCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "nodes",
		Usage:     "list the cluster's nodes (like sinfo -N)",
		UsageText: "corral nodes [--gpus] [--json]",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "print a JSON array of nodes"},
			&ucli.BoolFlag{Name: "gpus", Usage: "one line per GPU: model, memory, MIG mode, fGPU allocated/total, jobs"},
			socketFlag(),
		},
		Action: listNodes,
		Subcommands: []*ucli.Command{
			{
				Name:  "drain",
				Usage: "take nodes out of service (administrators): no new jobs start there, running ones finish",
				UsageText: "corral nodes drain NODES... --reason TEXT\n\n" +
					"NODES are names or hostlist expressions (n[01-04]). The node shows as draining\n" +
					"while jobs still run on it, then drained, with the reason; it stays so across\n" +
					"restarts until `corral nodes resume`.",
				Flags:  []ucli.Flag{&ucli.StringFlag{Name: "reason", Usage: "why (required; shown with the node)"}, socketFlag()},
				Action: drainNodes,
			},
			{
				Name:  "down",
				Usage: "declare nodes dead (administrators): their jobs end NODE_FAIL or are requeued, and may run elsewhere",
				UsageText: "corral nodes down NODES... --reason TEXT\n\n" +
					"For a host that is gone or must stop now: its running jobs end at once\n" +
					"(NODE_FAIL, or requeued when they allow it) and a requeued job may start on\n" +
					"another node straight away. The node stays down, whatever it reports, and is\n" +
					"told to kill what it still runs, until `corral nodes resume`.",
				Flags:  []ucli.Flag{&ucli.StringFlag{Name: "reason", Usage: "why (required; shown with the node)"}, socketFlag()},
				Action: downNodes,
			},
			{
				Name:      "resume",
				Usage:     "put drained or downed nodes back in service (administrators)",
				UsageText: "corral nodes resume NODES...",
				Flags:     []ucli.Flag{socketFlag()},
				Action:    resumeNodes,
			},
		},
	}
}

func drainNodes(c *ucli.Context) error { return takeOut(c, "drain", "drained", (*api.Client).Drain) }

func downNodes(c *ucli.Context) error { return takeOut(c, "set down", "set down", (*api.Client).Down) }

// takeOut drains or downs the named nodes; both need a reason.
func takeOut(c *ucli.Context, verb, done string, call func(*api.Client, context.Context, api.DrainRequest) (*api.NodesResponse, error)) error {
	if !c.Args().Present() {
		return usageErrorf("name the nodes to %s (names or hostlist expressions)", verb)
	}
	reason := strings.TrimSpace(c.String("reason"))
	if reason == "" {
		return usageErrorf("--reason is required: say why the nodes are %s", done)
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := call(client(c, ""), ctx, api.DrainRequest{Nodes: c.Args().Slice(), Reason: reason})
	if err != nil {
		return err
	}
	printChanged(c, done, resp.Nodes)
	return nil
}

func resumeNodes(c *ucli.Context) error {
	if !c.Args().Present() {
		return usageErrorf("name the nodes to resume (names or hostlist expressions)")
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := client(c, "").Resume(ctx, api.ResumeRequest{Nodes: c.Args().Slice()})
	if err != nil {
		return err
	}
	printChanged(c, "resumed", resp.Nodes)
	return nil
}

// printChanged says which nodes changed; nodes already in that state are
// not an error (the command is idempotent).
func printChanged(c *ucli.Context, verb string, nodes []string) {
	if len(nodes) == 0 {
		fmt.Fprintf(out(c), "nothing to do: the nodes were already %s\n", verb)
		return
	}
	fmt.Fprintf(out(c), "%s %s\n", verb, strings.Join(nodes, " "))
}

func listNodes(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	nodes, err := client(c, "").Nodes(ctx)
	if err != nil {
		return err
	}
	if nodes == nil {
		nodes = []api.Node{}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Name < nodes[b].Name })
	if c.Bool("json") {
		return writeJSON(out(c), nodes)
	}
	if c.Bool("gpus") {
		header, rows := gpuRows(nodes) // gpuview.go
		return writeTable(out(c), header, rows)
	}
	withGPUs := anyNodeGPUs(nodes)
	header := []string{"NODE", "STATE", "CPUS(A/T)", "MEMORY(A/T)"}
	if withGPUs {
		header = append(header, "FGPU(A/T)")
	}
	header = append(header, "PARTITIONS")
	withReason := false
	for _, n := range nodes {
		withReason = withReason || n.Reason != ""
	}
	if withReason {
		header = append(header, "REASON")
	}
	rows := make([][]string, 0, len(nodes))
	for _, n := range nodes {
		row := []string{
			n.Name,
			nodeStateText(&n),
			fmt.Sprintf("%d/%d", n.AllocCPUs, n.CPUs),
			formatSize(n.AllocMemBytes) + "/" + formatSize(n.MemBytes),
		}
		if withGPUs {
			row = append(row, nodeFGPUText(&n))
		}
		row = append(row, dash(strings.Join(n.Partitions, ",")))
		if withReason {
			row = append(row, n.Reason)
		}
		rows = append(rows, row)
	}
	return writeTable(out(c), header, rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nodeStateText is the node's state in `corral nodes`, with +completing
// where a part of an ended run still stops on a node that also runs jobs.
func nodeStateText(n *api.Node) string {
	st := strings.ToLower(string(n.State))
	if n.Completing && n.State != api.NodeCompleting {
		st += "+completing"
	}
	return st
}
