package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const sacctUsage = `Usage: sacct [OPTIONS]
  -a, --allusers            every user's jobs (root sees them all anyway)
  -A, --accounts=list       only these accounts
  -b, --brief               JobID, State, ExitCode
  -B, --batch-script        the batch script of each job -j names
  -e, --helpformat          list the fields -o takes
  -E, --endtime=time        jobs that ran before this time
  -j, --jobs=list           these jobs (12, 12_3, 12_[1-5]) or steps (12.batch, 12.extern, 12.0)
  -l, --long                the long field list
  -n, --noheader            no header lines
      --name=list           only these job names
  -N, --nodelist=hostlist   only jobs that ran on these nodes
  -o, --format=list         fields to print (Field%WIDTH for a width)
  -p, --parsable            '|' after every field
  -P, --parsable2           '|' between fields
      --delimiter=chars     the separator of -p and -P
      --env-vars            the environment each job -j names was submitted with
  -r, --partition=list      only these partitions
  -s, --state=list          only jobs in these states
  -S, --starttime=time      jobs that ran after this time (default: midnight; any with -j)
  -u, --user=list           only these users
  -X, --allocations         the jobs' lines only, not their steps
      --json                the records as JSON
  -V, --version             version
  -h, --help                this help
Accepted and ignored: -D, -L, -T, --noconvert, --local, --whole-hetjob. See docs/slurm.md.
`

func sacctCommand() *slurmCommand {
	return &slurmCommand{
		usage: sacctUsage,
		opts: withCommon(
			clusterOptions[0], clusterOptions[1],
			slurmopt.Option{Short: 'a', Long: "allusers"},
			slurmopt.Option{Short: 'h', Long: "help"},
			slurmopt.Option{Short: 'A', Long: "accounts", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'b', Long: "brief"},
			slurmopt.Option{Short: 'D', Long: "duplicates"},
			slurmopt.Option{Short: 'e', Long: "helpformat"},
			slurmopt.Option{Short: 'E', Long: "endtime", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'j', Long: "jobs", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'l', Long: "long"},
			slurmopt.Option{Short: 'L', Long: "allclusters"},
			slurmopt.Option{Short: 'n', Long: "noheader"},
			slurmopt.Option{Long: "name", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'N', Long: "nodelist", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'p', Long: "parsable"},
			slurmopt.Option{Short: 'P', Long: "parsable2"},
			slurmopt.Option{Long: "delimiter", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'r', Long: "partition", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 's', Long: "state", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'S', Long: "starttime", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'T', Long: "truncate"},
			slurmopt.Option{Short: 'u', Long: "user", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'X', Long: "allocations"},
			slurmopt.Option{Long: "json"},
			slurmopt.Option{Long: "noconvert"}, slurmopt.Option{Long: "local"},
			slurmopt.Option{Long: "units", Arg: slurmopt.RequiredArg},
			// Filters on what the runs were (sacctfilters.go).
			slurmopt.Option{Short: 'i', Long: "nnodes", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'I', Long: "ncpus", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'k', Long: "timelimit-min", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'K', Long: "timelimit-max", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'q', Long: "qos", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "uid", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'g', Long: "gid", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "group", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'R', Long: "reason", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "constraints", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'v', Long: "verbose"},
			slurmopt.Option{Short: 'B', Long: "batch-script"},
			slurmopt.Option{Long: "env-vars"},
			// corral has no heterogeneous jobs: every job is whole.
			slurmopt.Option{Long: "whole-hetjob", Arg: slurmopt.OptionalArg},
		),
		run: sacct,
	}
}

func sacct(s *slurmRun, r *slurmopt.Result) error {
	if _, err := clustersGiven(r); err != nil { // clusters.go: one cluster, nothing to filter
		return err
	}
	if len(r.Args) > 0 {
		return slurmUsagef("Unknown arguments: %s", strings.Join(r.Args, " "))
	}
	if r.Has("helpformat") {
		return printFieldNames(s, slurmfmt.AcctFieldNames())
	}
	if r.Has("batch-script") || r.Has("env-vars") {
		return sacctScriptOrEnv(s, r) // sacctscript.go
	}
	list := slurmfmt.SacctDefault
	switch {
	case r.Has("format"):
		list, _ = r.Last("format")
	case r.Has("brief"):
		list = slurmfmt.SacctBrief
	case r.Has("long"):
		list = slurmfmt.SacctLong
	}
	layout, err := slurmfmt.ParseAcctFormat(list)
	if err != nil {
		return err
	}
	env := &slurmfmt.Env{Group: groupName}
	if u, ok := r.Last("units"); ok { // memory sizes in one unit
		if len(u) != 1 || !strings.Contains("KMGTP", strings.ToUpper(u)) {
			return fmt.Errorf("invalid --units %q: give K, M, G, T or P", u)
		}
		env.MemUnit = strings.ToUpper(u)[0]
	}
	now := time.Now()
	f, named, steps, err := sacctFilter(r, now)
	if err != nil {
		return err
	}
	filters, err := parseSacctFilters(r) // sacctfilters.go
	if err != nil {
		return err
	}
	view := "summary" // what a queued job's row shows, but its account and request
	if layout.NeedSpec || r.Has("accounts") || r.Has("json") || filters.needJob() {
		view = "full"
	}
	rows, err := sacctRows(s, f, layout.NeedJob || filters.needJob(), view, now)
	if err != nil {
		return err
	}
	if rows, err = sacctKeep(r, rows); err != nil {
		return err
	}
	rows = slices.DeleteFunc(rows, func(row slurmfmt.AcctRow) bool { return !filters.keep(&row) })
	if !r.Has("allocations") {
		if err := addRunningSteps(s, rows); err != nil {
			return err
		}
	}
	if r.Has("json") {
		recs := make([]api.AcctRecord, len(rows))
		for i := range rows {
			recs[i] = rows[i].Rec
		}
		return writeJSON(s.stdout, recs)
	}
	lines := sacctLines(rows, r.Has("allocations"), named, steps)
	env.Now = now
	return slurmfmt.WriteAcct(s.stdout, layout, lines, accountingStyle(r), env)
}

// sacctFilter is the history's filter: users, jobs, states and the time
// window, which starts at midnight unless jobs are named or -S says.
// named are the jobs -j names by themselves, steps the JOB.STEP it names.
func sacctFilter(r *slurmopt.Result, now time.Time) (f api.AcctFilter, named []string, steps []sacctStep, err error) {
	if named, steps, err = splitSacctSteps(r.All("jobs")); err != nil {
		return f, nil, nil, err
	}
	refs := slices.Clone(named)
	for _, st := range steps {
		refs = append(refs, st.job)
	}
	if f.IDs, f.Tasks, err = slurmJobRefs(refs); err != nil {
		return f, nil, nil, err
	}
	if !r.Has("allusers") {
		f.Users = dedupe(commaList(r.All("user")))
	}
	start, _ := r.Last("starttime")
	end, _ := r.Last("endtime")
	if start == "" && len(f.IDs)+len(f.Tasks) == 0 {
		start = "today"
	}
	return f, named, steps, acctStatesAndWindow(&f, commaList(r.All("state")), start, end, now) // acct.go
}

// sacctRows are the history's runs and the queue's jobs, in job order.
// withJobs: the fields need the jobs' own records too (limits, work
// directory), looked up among every job the controller still has. view
// is the listing view the fields need of those jobs.
func sacctRows(s *slurmRun, f api.AcctFilter, withJobs bool, view string, now time.Time) ([]slurmfmt.AcctRow, error) {
	ctx, cancel := s.requestContext()
	defer cancel()
	recs, err := s.client().Acct(ctx, f)
	if err != nil {
		return nil, err
	}
	jf := api.JobFilter{Users: f.Users, IDs: f.IDs, Tasks: f.Tasks, All: withJobs}
	jobs, err := listJobsView(s, jf, view) // squeue.go
	if err != nil {
		return nil, err
	}
	byID := make(map[uint64]*api.Job, len(jobs))
	for i := range jobs {
		byID[jobs[i].ID] = &jobs[i]
	}
	rows := make([]slurmfmt.AcctRow, 0, len(recs)+len(jobs))
	for _, rec := range recs {
		rows = append(rows, slurmfmt.AcctRow{Rec: rec, Job: byID[rec.JobID]})
	}
	for i := range jobs {
		j := &jobs[i]
		if j.State.Terminal() || !inWindow(j, f) || len(f.States) > 0 && !slices.Contains(f.States, j.State) {
			continue
		}
		rows = append(rows, slurmfmt.AcctRowOf(j, now))
	}
	slices.SortStableFunc(rows, func(a, b slurmfmt.AcctRow) int {
		return cmp.Or(cmp.Compare(a.Rec.JobID, b.Rec.JobID), cmp.Compare(a.Rec.Run, b.Rec.Run))
	})
	return rows, nil
}

// inWindow: a queued job is in the window when it was submitted before
// its end (it waits or runs until now, after any start).
func inWindow(j *api.Job, f api.AcctFilter) bool {
	return f.End.IsZero() || !j.SubmitTime.After(f.End)
}

// sacctKeep applies the filters the controller does not.
func sacctKeep(r *slurmopt.Result, rows []slurmfmt.AcctRow) ([]slurmfmt.AcctRow, error) {
	names, parts, accounts := commaList(r.All("name")), commaList(r.All("partition")), commaList(r.All("accounts"))
	var nodes []string
	for _, expr := range r.All("nodelist") {
		n, err := hostlist.Expand(expr)
		if err != nil {
			return nil, fmt.Errorf("invalid node list %s: %v", expr, err)
		}
		nodes = append(nodes, n...)
	}
	return slices.DeleteFunc(rows, func(row slurmfmt.AcctRow) bool {
		rec := &row.Rec
		return len(names) > 0 && !slices.Contains(names, rec.Name) ||
			len(parts) > 0 && !slices.Contains(parts, rec.Partition) ||
			len(accounts) > 0 && !slices.Contains(accounts, rec.Account) ||
			len(nodes) > 0 && !slices.ContainsFunc(rec.Nodes, func(n string) bool { return slices.Contains(nodes, n) })
	}), nil
}

// accountingStyle is the layout -n, -p, -P and --delimiter ask for, as
// sacct and sshare take them.
func accountingStyle(r *slurmopt.Result) slurmfmt.AcctStyle {
	st := slurmfmt.AcctStyle{NoHeader: r.Has("noheader"), Parsable: r.Has("parsable") || r.Has("parsable2"), NoEnding: r.Has("parsable2")}
	st.Delimiter, _ = r.Last("delimiter")
	return st
}

// printFieldNames prints field names four to a line, as -e does.
func printFieldNames(s *slurmRun, names []string) error {
	for i, n := range names {
		fmt.Fprintf(s.stdout, "%-20s", n)
		if i%4 == 3 || i == len(names)-1 {
			s.stdout.WriteString("\n")
		}
	}
	return nil
}
