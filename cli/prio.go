//go:build !slurmonly

package cli

import (
	"strconv"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// prioCommand is `corral prio`: what each pending job's priority is made
// of, as sprio shows it.
func prioCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "prio",
		Usage: "show the factors of pending jobs' priorities (like sprio)",
		UsageText: "corral prio [-S SORT] [-l] [-n] [-w] [-u USERS] [-j IDS] [--json]\n\n" +
			"SORT is sprio's: field letters, comma-separated or not, each after an optional + (ascending)\n" +
			"or - (descending): i job ID, y priority, u user, r or p partition, a age, f fairshare,\n" +
			"j job size, N nice. Without a sign, priority and factors sort highest first and the\n" +
			"others ascending, so -S y and -S -y both list the highest priority first. Default: i.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "sort", Aliases: []string{"S"}, Usage: "sort by these fields (see above)"},
			&ucli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "add the ACCOUNT and NICE columns"},
			&ucli.BoolFlag{Name: "norm", Aliases: []string{"n"}, Usage: "show each factor normalized (0 to 1) instead of weighted"},
			&ucli.BoolFlag{Name: "weights", Aliases: []string{"w"}, Usage: "show the configured weight of each factor only"},
			&ucli.StringSliceFlag{Name: "user", Aliases: []string{"u"}, Usage: "only jobs of these users (repeatable, comma list)"},
			&ucli.StringSliceFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "only these job IDs (comma list)"},
			&ucli.BoolFlag{Name: "json", Usage: "print the answer as JSON"},
			socketFlag(),
		},
		Action: prio,
	}
}

func prio(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	keys, err := parsePrioSort(c.String("sort"))
	if err != nil {
		return err
	}
	ids, err := parseJobIDs(commaList(c.StringSlice("jobs")))
	if err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	resp, err := client(c, "").Prio(ctx, api.PrioFilter{Users: dedupe(commaList(c.StringSlice("user"))), IDs: ids})
	if err != nil {
		return err
	}
	if resp.Jobs == nil {
		resp.Jobs = []api.JobPrio{}
	}
	sortPrio(resp.Jobs, keys)
	if c.Bool("json") {
		if c.Bool("weights") {
			return writeJSON(out(c), resp.Weights)
		}
		return writeJSON(out(c), resp)
	}
	// Like sprio, a factor nobody weighs is not shown.
	var factors []prioFactor
	for _, f := range prioFactors {
		if f.weight(resp.Weights) != 0 {
			factors = append(factors, f)
		}
	}
	long := c.Bool("long")
	header := []string{"JOBID", "PARTITION", "USER"}
	if long {
		header = append(header, "ACCOUNT")
	}
	header = append(header, "PRIORITY")
	for _, f := range factors {
		header = append(header, f.header)
	}
	if long {
		header = append(header, "NICE")
	}
	if c.Bool("weights") {
		row := make([]string, len(header))
		row[0] = "Weights"
		first := len(header) - len(factors) - boolInt(long) // the first factor's column
		for i, f := range factors {
			row[first+i] = strconv.FormatInt(f.weight(resp.Weights), 10)
		}
		return writeTable(out(c), header, [][]string{row})
	}
	rows := make([][]string, 0, len(resp.Jobs))
	for i := range resp.Jobs {
		j := &resp.Jobs[i]
		row := []string{j.Job, j.Partition, j.User}
		if long {
			row = append(row, j.Account)
		}
		row = append(row, strconv.FormatInt(j.Priority, 10))
		for _, f := range factors {
			if v := f.get(j); c.Bool("norm") {
				row = append(row, strconv.FormatFloat(v.Value, 'f', 7, 64))
			} else {
				row = append(row, strconv.FormatInt(v.Part, 10))
			}
		}
		if long {
			row = append(row, strconv.Itoa(j.Nice))
		}
		rows = append(rows, row)
	}
	return writeTable(out(c), header, rows)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
