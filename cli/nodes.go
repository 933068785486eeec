package cli

import (
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
	}
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
			strings.ToLower(string(n.State)),
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
