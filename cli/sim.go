//go:build !slurmonly

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/sim"
)

// simCommand is `corral sim`: replay an SWF trace through corral's own
// priority and scheduling code in virtual time (package sim). It needs no
// controller.
func simCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "sim",
		Usage: "replay a workload trace (SWF) through corral's scheduler in virtual time",
		UsageText: "corral sim --trace FILE.swf [--procs N] [--policy P | --compare P,P,...] [--slurm-conf FILE]\n" +
			"           [--conf FILE] [--shake N [--jitter S] [--seed N]] [--jobs N] [--json]\n\n" +
			"Policies: fcfs, easy, conservative, slurm (Slurm's backfill with 22.05's defaults, or\n" +
			"the slurm.conf given with --slurm-conf) and default (corral's stock configuration, or\n" +
			"the scheduling settings of the corral.conf given with --conf: priority weights, decay,\n" +
			"Backfill* keys; its accounts and users are not used, as a trace's users are numbers).\n\n" +
			"Prints waits and bounded slowdowns (tau 10 s: mean, median, p95, p99, max),\n" +
			"utilization, makespan, per-user fairness (Jain's index over users' mean bounded\n" +
			"slowdown), the same split by width (1, 2-16, >16 processors) and run time (<1h,\n" +
			">=1h), and unfair starts: the fraction of jobs that started later than under EASY.\n" +
			"--compare prints the policies side by side; --shake N replays N copies of the\n" +
			"trace with submit times jittered by up to --jitter seconds and prints each\n" +
			"headline metric's mean, standard deviation and range.\n\n" +
			"A trace line may add three fields to SWF's 18: the array job it is a task of,\n" +
			"that array's %N limit, and 1 for a singleton (of its user and executable). The\n" +
			"replay keeps those limits exactly as the controller does.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "trace", Usage: "Standard Workload Format file to replay, gzipped (.swf.gz, as the archive serves them) or not", TakesFile: true},
			&ucli.IntFlag{Name: "procs", Usage: "processors of the machine (default: the trace header's MaxProcs, else MaxNodes, times the processors per node where jobs hold whole nodes of several)"},
			&ucli.StringFlag{Name: "policy", Value: string(sim.PolicyDefault), Usage: "fcfs, easy, conservative, slurm or default"},
			&ucli.StringFlag{Name: "compare", Usage: "replay each of these policies (comma-separated) and print them side by side"},
			&ucli.StringFlag{Name: "slurm-conf", Usage: "slurm.conf whose priority and backfill settings the slurm policy uses", TakesFile: true},
			&ucli.StringFlag{Name: "conf", Usage: "corral.conf whose scheduling settings the default policy uses", TakesFile: true},
			&ucli.IntFlag{Name: "shake", Usage: "replay N copies with jittered submit times and report the spread"},
			&ucli.Int64Flag{Name: "jitter", Value: 60, Usage: "with --shake: the most seconds a submit time moves either way"},
			&ucli.Uint64Flag{Name: "seed", Value: 1, Usage: "with --shake: the seed of the jitter (same seed, same replays)"},
			&ucli.IntFlag{Name: "jobs", Usage: "replay only the first N jobs (default: all)"},
			&ucli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		},
		Action: runSim,
	}
}

// simOutput is what --json prints for one policy.
type simOutput struct {
	Trace string `json:"trace"`
	*sim.Result
}

// simRequest is a command line, checked.
type simRequest struct {
	path     string
	policies []sim.Policy
	compare  bool
	cfg      sim.Config
	shake    sim.ShakeConfig
}

func parseSimArgs(c *ucli.Context) (simRequest, error) {
	var q simRequest
	if c.Args().Present() {
		return q, usageErrorf("unexpected argument %q", c.Args().First())
	}
	if q.path = c.String("trace"); q.path == "" {
		return q, usageErrorf("missing --trace FILE.swf")
	}
	if c.IsSet("procs") && c.Int("procs") < 1 {
		return q, usageErrorf("--procs must be at least 1 (got %d)", c.Int("procs"))
	}
	if c.Int("jobs") < 0 || (c.IsSet("jobs") && c.Int("jobs") == 0) {
		return q, usageErrorf("--jobs must be at least 1 (got %d)", c.Int("jobs"))
	}
	q.cfg = sim.Config{Procs: c.Int("procs"), MaxJobs: c.Int("jobs")}
	switch {
	case c.IsSet("compare") && c.IsSet("policy"):
		return q, usageErrorf("give --policy or --compare, not both")
	case c.IsSet("compare"):
		ps, err := sim.ParsePolicies(c.String("compare"))
		if err != nil {
			return q, usageErrorf("--compare: %v", err)
		}
		q.policies, q.compare = ps, true
	default:
		p, err := sim.ParsePolicy(c.String("policy"))
		if err != nil {
			return q, usageErrorf("%v", err)
		}
		q.policies = []sim.Policy{p}
	}
	if c.IsSet("shake") && c.Int("shake") < 2 {
		return q, usageErrorf("--shake must be at least 2 replays (got %d)", c.Int("shake"))
	}
	if !c.IsSet("shake") && (c.IsSet("jitter") || c.IsSet("seed")) {
		return q, usageErrorf("--jitter and --seed go with --shake N")
	}
	if c.Int64("jitter") < 1 {
		return q, usageErrorf("--jitter must be at least 1 second (got %d)", c.Int64("jitter"))
	}
	q.shake = sim.ShakeConfig{Replays: c.Int("shake"), Jitter: c.Int64("jitter"), Seed: c.Uint64("seed")}
	if path := c.String("slurm-conf"); path != "" {
		if !containsPolicy(q.policies, sim.PolicySlurm) {
			return q, usageErrorf("--slurm-conf is for the slurm policy: add it to --policy or --compare")
		}
		f, err := os.Open(path)
		if err != nil {
			return q, usageErrorf("cannot read slurm.conf: %v", err)
		}
		defer f.Close()
		sc, err := sim.ParseSlurmConf(f)
		if err != nil {
			return q, usageErrorf("%s: %v", path, err)
		}
		q.cfg.Slurm = &sc
	}
	if path := c.String("conf"); path != "" {
		if !containsPolicy(q.policies, sim.PolicyDefault) {
			return q, usageErrorf("--conf is for the default policy: add it to --policy or --compare")
		}
		f, err := os.Open(path)
		if err != nil {
			return q, usageErrorf("cannot read corral.conf: %v", err)
		}
		defer f.Close()
		file, err := config.ParseFile(f, path)
		if err != nil {
			return q, usageErrorf("%v", err)
		}
		q.cfg.Site = &file.Scheduling
	}
	return q, nil
}

func containsPolicy(ps []sim.Policy, p sim.Policy) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func runSim(c *ucli.Context) error {
	q, err := parseSimArgs(c)
	if err != nil {
		return err
	}
	f, err := os.Open(q.path)
	if err != nil {
		return usageErrorf("cannot read trace: %v", err)
	}
	defer f.Close()
	tr, err := sim.ParseSWF(f)
	if err != nil {
		return usageErrorf("%s: %v", q.path, err)
	}
	name := filepath.Base(q.path)
	if q.shake.Replays > 0 {
		spreads, err := sim.ShakeCompare(tr, q.cfg, q.policies, q.shake)
		if err != nil {
			return usageErrorf("%s: %v", q.path, err)
		}
		if c.Bool("json") {
			return writeJSON(out(c), shakeOutput{Trace: q.path, Replays: q.shake.Replays,
				Jitter: q.shake.Jitter, Seed: q.shake.Seed, Policies: spreads})
		}
		return printShake(c, name, q.shake, spreads)
	}
	if !q.compare {
		q.cfg.Policy = q.policies[0]
		res, err := sim.Run(tr, q.cfg)
		if err != nil {
			return usageErrorf("%s: %v", q.path, err)
		}
		if c.Bool("json") {
			return writeJSON(out(c), simOutput{Trace: q.path, Result: res})
		}
		return printSim(c, name, res)
	}
	results, err := sim.Compare(tr, q.cfg, q.policies)
	if err != nil {
		return usageErrorf("%s: %v", q.path, err)
	}
	if c.Bool("json") {
		return writeJSON(out(c), compareOutput{Trace: q.path, Procs: results[0].Procs,
			Skipped: results[0].Skipped, Cancelled: results[0].Cancelled, Partial: results[0].Partial, Results: results})
	}
	return printCompare(c, name, results)
}

func printSim(c *ucli.Context, trace string, res *sim.Result) error {
	m := res.Metrics
	w := tabwriter.NewWriter(out(c), 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "trace\t%s\n", trace)
	fmt.Fprintf(w, "policy\t%s\n", res.Policy)
	fmt.Fprintf(w, "processors\t%d\n", res.Procs)
	fmt.Fprintf(w, "jobs\t%d %s\n", m.Jobs, linesLeftOut(res))
	fmt.Fprintf(w, "makespan\t%d s (%.1f days)\n", m.Makespan, float64(m.Makespan)/86400)
	fmt.Fprintf(w, "utilization\t%.2f%%\n", 100*m.Utilization)
	printSummary(w, "", m.Summary)
	fmt.Fprintf(w, "unfair starts\t%.2f%% of jobs started later than under %s\n", 100*m.UnfairStarts, m.UnfairReference)
	for _, split := range []struct {
		name    string
		classes []sim.ClassStats
	}{{"width", m.ByWidth}, {"length", m.ByLength}} {
		for _, k := range split.classes {
			pre := fmt.Sprintf("%s %s ", split.name, k.Class)
			fmt.Fprintf(w, "%sjobs\t%d\n", pre, k.Jobs)
			if k.Jobs > 0 {
				printSummary(w, pre, k.Summary)
			}
		}
	}
	return w.Flush()
}

// printSummary prints the wait, bounded-slowdown and fairness lines of
// a set of jobs, each label after pre.
func printSummary(w io.Writer, pre string, m sim.Summary) {
	fmt.Fprintf(w, "%swait\tmean %.0f s, median %.0f s, p95 %.0f s, p99 %.0f s, max %d s\n",
		pre, m.MeanWait, m.MedianWait, m.P95Wait, m.P99Wait, m.MaxWait)
	fmt.Fprintf(w, "%sbounded slowdown\tmean %.2f (tau %d s), median %.2f, p95 %.2f, p99 %.2f, max %.2f\n",
		pre, m.MeanBSLD, sim.Tau, m.MedianBSLD, m.P95BSLD, m.P99BSLD, m.MaxBSLD)
	users := fmt.Sprintf("%d users'", m.Users)
	if m.Users == 1 {
		users = "1 user's"
	}
	fmt.Fprintf(w, "%sfairness\tJain %.3f over %s mean bounded slowdown (worst user %.2f)\n",
		pre, m.Fairness, users, m.WorstUserBSLD)
}

// linesLeftOut says which trace lines the replay did not run as jobs.
func linesLeftOut(res *sim.Result) string {
	partial := ""
	if res.Partial > 0 {
		partial = fmt.Sprintf(", %d partial runs of jobs replayed whole from their summary line", res.Partial)
	}
	return fmt.Sprintf("(%d trace lines skipped, %d cancelled before starting%s)", res.Skipped, res.Cancelled, partial)
}

// compareOutput is what --compare --json prints.
type compareOutput struct {
	Trace     string        `json:"trace"`
	Procs     int           `json:"procs"`
	Skipped   int           `json:"skipped"`
	Cancelled int           `json:"cancelled"`
	Partial   int           `json:"partial,omitempty"`
	Results   []*sim.Result `json:"results"`
}

// printCompare prints one row per metric, one column per policy.
func printCompare(c *ucli.Context, trace string, results []*sim.Result) error {
	fmt.Fprintf(out(c), "trace %s, %d processors, %d jobs %s\n",
		trace, results[0].Procs, results[0].Metrics.Jobs, linesLeftOut(results[0]))
	policies := make([]sim.Policy, len(results))
	for i, r := range results {
		policies[i] = r.Policy
	}
	return sideBySide(c, policies, sim.Rows, func(row sim.Row, i int) string { return row.Text(results[i].Metrics) })
}

// sideBySide prints a header of policies and one line per row, cell(row,
// i) the value for policies[i], right-aligned.
func sideBySide(c *ucli.Context, policies []sim.Policy, rows []sim.Row, cell func(sim.Row, int) string) error {
	w := tabwriter.NewWriter(out(c), 0, 0, 2, ' ', tabwriter.AlignRight)
	line := []string{"metric"}
	for _, p := range policies {
		line = append(line, string(p))
	}
	fmt.Fprintln(w, strings.Join(line, "\t")+"\t")
	for _, row := range rows {
		line = append(line[:0], row.Label)
		for i := range policies {
			line = append(line, cell(row, i))
		}
		fmt.Fprintln(w, strings.Join(line, "\t")+"\t")
	}
	return w.Flush()
}

// shakeOutput is what --shake --json prints.
type shakeOutput struct {
	Trace    string        `json:"trace"`
	Replays  int           `json:"replays"`
	Jitter   int64         `json:"jitter_s"`
	Seed     uint64        `json:"seed"`
	Policies []sim.Spreads `json:"policies"`
}

// printShake prints each headline metric's mean ± standard deviation and
// range over the shaken replays, one column per policy.
func printShake(c *ucli.Context, trace string, sc sim.ShakeConfig, spreads []sim.Spreads) error {
	fmt.Fprintf(out(c), "trace %s, %d replays with submit times jittered by up to %d s (seed %d): mean ± stddev [min, max]\n",
		trace, sc.Replays, sc.Jitter, sc.Seed)
	policies := make([]sim.Policy, len(spreads))
	for i, s := range spreads {
		policies[i] = s.Policy
	}
	return sideBySide(c, policies, sim.Headline, func(row sim.Row, i int) string {
		x, f := spreads[i].Metrics[row.Key], row.Format
		return fmt.Sprintf(f+" ± "+f+" ["+f+", "+f+"]", x.Mean, x.Stddev, x.Min, x.Max)
	})
}
