package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/sim"
)

// simCommand is `corral sim`: replay an SWF trace through corral's own
// priority and scheduling code in virtual time (package sim). It needs no
// controller.
func simCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "sim",
		Usage: "replay a workload trace (SWF) through corral's scheduler in virtual time",
		UsageText: "corral sim --trace FILE.swf [--procs N] [--policy easy|conservative|fcfs|default] [--jobs N] [--json]\n\n" +
			"Prints jobs, makespan, utilization, waits, mean bounded slowdown (tau 10 s) and\n" +
			"per-user fairness (Jain's index over users' mean bounded slowdown).\n\n" +
			"A trace line may add three fields to SWF's 18: the array job it is a task of,\n" +
			"that array's %N limit, and 1 for a singleton (of its user and executable). The\n" +
			"replay keeps those limits exactly as the controller does.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "trace", Usage: "Standard Workload Format file to replay", TakesFile: true},
			&ucli.IntFlag{Name: "procs", Usage: "processors of the machine (default: the trace header's MaxProcs)"},
			&ucli.StringFlag{Name: "policy", Value: string(sim.PolicyDefault), Usage: "easy, conservative, fcfs or default"},
			&ucli.IntFlag{Name: "jobs", Usage: "replay only the first N jobs (default: all)"},
			&ucli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		},
		Action: runSim,
	}
}

// simOutput is what --json prints.
type simOutput struct {
	Trace string `json:"trace"`
	*sim.Result
}

func runSim(c *ucli.Context) error {
	if c.Args().Present() {
		return usageErrorf("unexpected argument %q", c.Args().First())
	}
	path := c.String("trace")
	if path == "" {
		return usageErrorf("missing --trace FILE.swf")
	}
	if c.IsSet("procs") && c.Int("procs") < 1 {
		return usageErrorf("--procs must be at least 1 (got %d)", c.Int("procs"))
	}
	if c.Int("jobs") < 0 || (c.IsSet("jobs") && c.Int("jobs") == 0) {
		return usageErrorf("--jobs must be at least 1 (got %d)", c.Int("jobs"))
	}
	policy, err := sim.ParsePolicy(c.String("policy"))
	if err != nil {
		return usageErrorf("%v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return usageErrorf("cannot read trace: %v", err)
	}
	defer f.Close()
	tr, err := sim.ParseSWF(f)
	if err != nil {
		return usageErrorf("%s: %v", path, err)
	}
	res, err := sim.Run(tr, sim.Config{Procs: c.Int("procs"), Policy: policy, MaxJobs: c.Int("jobs")})
	if err != nil {
		return usageErrorf("%s: %v", path, err)
	}
	if c.Bool("json") {
		return writeJSON(out(c), simOutput{Trace: path, Result: res})
	}
	return printSim(c, filepath.Base(path), res)
}

func printSim(c *ucli.Context, trace string, res *sim.Result) error {
	m := res.Metrics
	w := tabwriter.NewWriter(out(c), 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "trace\t%s\n", trace)
	fmt.Fprintf(w, "policy\t%s\n", res.Policy)
	fmt.Fprintf(w, "processors\t%d\n", res.Procs)
	fmt.Fprintf(w, "jobs\t%d (%d trace lines skipped)\n", m.Jobs, res.Skipped)
	fmt.Fprintf(w, "makespan\t%d s (%.1f days)\n", m.Makespan, float64(m.Makespan)/86400)
	fmt.Fprintf(w, "utilization\t%.2f%%\n", 100*m.Utilization)
	fmt.Fprintf(w, "wait\tmean %.0f s, median %.0f s, p95 %.0f s, max %d s\n", m.MeanWait, m.MedianWait, m.P95Wait, m.MaxWait)
	fmt.Fprintf(w, "bounded slowdown\tmean %.2f (tau %d s)\n", m.MeanBSLD, sim.Tau)
	fmt.Fprintf(w, "fairness\tJain %.3f over %d users' mean bounded slowdown\n", m.Fairness, m.Users)
	return w.Flush()
}
