//go:build !slurmonly

package cli

import (
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// barWidth is the width of a usage bar in characters.
const barWidth = 20

func usageCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "usage",
		Usage:     "show allocated resources per partition and yours against your policy",
		UsageText: "corral usage [--user NAME | --all] [--json]",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "another user's usage (admins)"},
			&ucli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every user's usage (admins)"},
			&ucli.BoolFlag{Name: "json", Usage: "print JSON"},
			socketFlag(),
		},
		Action: showUsage,
	}
}

func showUsage(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	u, err := client(c, "").UsageFor(ctx, c.String("user"), c.Bool("all"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(out(c), u)
	}
	return writeUsage(out(c), u)
}

// writeUsage draws one bar per resource: partitions against their total,
// users against their policy (no bar where the policy sets no limit).
func writeUsage(w io.Writer, u *api.Usage) error {
	var b strings.Builder
	for _, p := range u.Partitions {
		fmt.Fprintf(&b, "partition %s\n", p.Partition)
		writeBars(&b, p.Allocated, p.Total, "total")
	}
	for _, us := range u.Users {
		fmt.Fprintf(&b, "user %s (%d running, %d pending)\n", us.User, us.RunningJobs, us.PendingJobs)
		writeBars(&b, us.Allocated, us.Allowed, "allowed")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBars(b *strings.Builder, used, of api.UsageAmounts, word string) {
	line := func(name string, used, of int64, format func(int64) string) {
		if of <= 0 {
			fmt.Fprintf(b, "  %-6s %s %s (no limit)\n", name, strings.Repeat(" ", barWidth+2), format(used))
			return
		}
		fmt.Fprintf(b, "  %-6s %s %s/%s %s\n", name, bar(used, of), format(used), format(of), word)
	}
	count := func(n int64) string { return fmt.Sprint(n) }
	line("cpu", int64(used.CPUs), int64(of.CPUs), count)
	line("mem", used.MemBytes, of.MemBytes, formatSize)
	line("fgpu", int64(used.FGPU), int64(of.FGPU), formatFGPU)
}

// bar is [#####.....] filled in proportion (never more than full).
func bar(used, of int64) string {
	n := int(min(used, of) * barWidth / of)
	if used > 0 && n == 0 {
		n = 1 // something is in use: show it
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", barWidth-n) + "]"
}

// formatFGPU prints hundredths as a decimal fGPU amount.
func formatFGPU(h int64) string {
	if h%100 == 0 {
		return fmt.Sprint(h / 100)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%02d", h/100, h%100), "0")
}
