package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// prioFactor is one factor column: its header, its sort letter and where
// it is in a JobPrio.
type prioFactor struct {
	header string
	letter byte
	get    func(*api.JobPrio) api.PrioFactor
	weight func(api.PrioWeights) int64
}

// prioFactors in sprio's column order.
var prioFactors = []prioFactor{
	{"AGE", 'a', func(j *api.JobPrio) api.PrioFactor { return j.Age }, func(w api.PrioWeights) int64 { return w.Age }},
	{"FAIRSHARE", 'f', func(j *api.JobPrio) api.PrioFactor { return j.Fairshare }, func(w api.PrioWeights) int64 { return w.Fairshare }},
	{"JOBSIZE", 'j', func(j *api.JobPrio) api.PrioFactor { return j.JobSize }, func(w api.PrioWeights) int64 { return w.JobSize }},
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

// prioSortKey is one field of a sort spec.
type prioSortKey struct {
	letter     byte
	descending bool
}

// parsePrioSort reads sprio's -S: letters, commas ignored, each letter
// optionally after + or -. A letter without a sign takes its natural
// order: highest first for priority and factors, ascending for the rest.
func parsePrioSort(spec string) ([]prioSortKey, error) {
	if spec == "" {
		return []prioSortKey{{letter: 'i'}}, nil
	}
	var keys []prioSortKey
	sign := byte(0)
	for i := 0; i < len(spec); i++ {
		ch := spec[i]
		switch {
		case ch == ',' || ch == ' ':
			if sign != 0 {
				return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
			}
			continue
		case ch == '+' || ch == '-':
			if sign != 0 {
				return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
			}
			sign = ch
			continue
		}
		natural, ok := prioSortFields[ch]
		if !ok {
			return nil, usageErrorf("invalid sort field %q in %q (valid: i job ID, y priority, u user, r or p partition, a age, f fairshare, j job size, N nice)", string(ch), spec)
		}
		key := prioSortKey{letter: ch, descending: natural}
		if sign != 0 {
			key.descending = sign == '-'
		}
		keys, sign = append(keys, key), 0
	}
	if sign != 0 {
		return nil, usageErrorf("invalid sort %q: %c must come right before a field letter", spec, sign)
	}
	if len(keys) == 0 {
		return nil, usageErrorf("invalid sort %q: give at least one field letter", spec)
	}
	return keys, nil
}

// prioSortFields maps sprio's sort letters to whether they sort highest
// first without a sign. sprio's weighted (upper case) and normalized
// letters sort alike.
var prioSortFields = map[byte]bool{
	'i': false, 'u': false, 'r': false, 'p': false, 'P': false, 'N': false,
	'y': true, 'Y': true, 'a': true, 'A': true, 'f': true, 'F': true, 'j': true, 'J': true,
}

// sortPrio orders jobs by keys, ties by job ID.
func sortPrio(jobs []api.JobPrio, keys []prioSortKey) {
	slices.SortStableFunc(jobs, func(a, b api.JobPrio) int {
		for _, k := range keys {
			c := comparePrio(&a, &b, k.letter)
			if k.descending {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.JobID, b.JobID)
	})
}

func comparePrio(a, b *api.JobPrio, letter byte) int {
	switch letter {
	case 'i':
		return cmp.Compare(a.JobID, b.JobID)
	case 'u':
		return strings.Compare(a.User, b.User)
	case 'r', 'p', 'P':
		return strings.Compare(a.Partition, b.Partition)
	case 'N':
		return cmp.Compare(a.Nice, b.Nice)
	case 'y', 'Y':
		return cmp.Compare(a.Priority, b.Priority)
	}
	for _, f := range prioFactors {
		if f.letter == letter|0x20 { // a/A, f/F, j/J
			return cmp.Compare(f.get(a).Value, f.get(b).Value)
		}
	}
	panic(fmt.Sprintf("prio: unhandled sort letter %c", letter))
}
