//go:build !slurmonly

package cli

import (
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// shareCommand is `corral share`: the fairshare tree with each account's
// and user's shares, usage and fairshare factor, as sshare shows it.
func shareCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "share",
		Usage: "show shares, usage and fairshare factors of accounts and users (like sshare)",
		UsageText: "corral share [-u USERS] [--json]\n\n" +
			"Accounts are indented under their parent. NormShares is the fraction of the cluster the\n" +
			"shares are worth, EffectvUsage the fraction of all (decayed) usage; RawUsage is in\n" +
			"billing-seconds. FairShare is the factor a user's pending jobs get, 0 to 1.",
		Flags: []ucli.Flag{
			&ucli.StringSliceFlag{Name: "user", Aliases: []string{"u"}, Usage: "only these users' lines (accounts are always shown)"},
			&ucli.BoolFlag{Name: "json", Usage: "print the answer as JSON"},
			socketFlag(),
		},
		Action: share,
	}
}

func share(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := client(c, "").Share(ctx, dedupe(commaList(c.StringSlice("user"))))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(out(c), resp)
	}
	rows := make([][]string, 0, len(resp.Rows))
	for _, r := range resp.Rows {
		raw, fs := "", ""
		if r.Depth > 0 {
			raw = strconv.FormatFloat(r.RawShares, 'f', -1, 64)
		}
		if r.FairShare != nil {
			fs = strconv.FormatFloat(*r.FairShare, 'f', 6, 64)
		}
		rows = append(rows, []string{
			strings.Repeat(" ", r.Depth) + r.Account, r.User, raw,
			strconv.FormatFloat(r.NormShares, 'f', 6, 64),
			strconv.FormatFloat(r.RawUsage, 'f', 0, 64),
			strconv.FormatFloat(r.EffectvUsage, 'f', 6, 64), fs,
		})
	}
	return writeTable(out(c), []string{"Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare"}, rows)
}
