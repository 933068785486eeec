package cli

import (
	"fmt"
	"slices"
	"sort"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmopt"
)

const scancelUsage = `Usage: scancel [OPTIONS] [job_id[_array_id]...]
  -A, --account=account     only jobs of this account
  -n, --name=job_name       only jobs with this name (also --jobname)
  -p, --partition=partition only jobs in this partition
  -q, --qos=qos             only jobs with this qos
  -t, --state=states        only jobs in these states (PENDING, RUNNING)
  -u, --user=user_name      only jobs of this user
      --me                  only my jobs
  -w, --nodelist=hostlist   only jobs on these nodes
  -s, --signal=name|number  send this signal and keep the job running: to
                            its steps, not to the batch script (KILL: cancel)
  -b, --batch               signal the batch script's shell alone
  -f, --full                signal the batch script and all it started
  -Q, --quiet               no messages for jobs that cannot be cancelled
  -H, --hurry, -v, --verbose: accepted
  -V, --version             version
      --help                this help
Job IDs: 12, 12_3 (one array task), 12_[1-5] (several), 12.0 (one step), comma lists.
Not supported (refused): -i/--interactive, -R/--reservation, -M/--clusters.
See docs/slurm.md.
`

func scancelCommand() *slurmCommand {
	return &slurmCommand{
		usage: scancelUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'A', Long: "account", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'b', Long: "batch"},
			slurmopt.Option{Short: 'f', Long: "full"},
			slurmopt.Option{Short: 'H', Long: "hurry"},
			slurmopt.Option{Short: 'i', Long: "interactive"},
			slurmopt.Option{Short: 'M', Long: "clusters", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'n', Long: "name", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "jobname", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "me"},
			slurmopt.Option{Short: 'p', Long: "partition", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'q', Long: "qos", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'Q', Long: "quiet"},
			slurmopt.Option{Short: 'R', Long: "reservation", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 's', Long: "signal", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 't', Long: "state", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'u', Long: "user", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'v', Long: "verbose"},
			slurmopt.Option{Short: 'w', Long: "nodelist", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "wckey", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "sibling", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "ctld"}, // scancel always asks the controller
		),
		run: scancel,
	}
}

func scancel(s *slurmRun, r *slurmopt.Result) error {
	for _, o := range []struct{ name, why string }{
		{"interactive", "interactive confirmation is not supported"},
		{"reservation", "corral has no reservations"},
		{"wckey", "corral has no wckeys"},
		{"sibling", "corral has no federation"},
	} {
		if r.Has(o.name) {
			return fmt.Errorf("--%s is not supported by corral: %s", o.name, o.why)
		}
	}
	if _, err := clustersGiven(r); err != nil { // clusters.go: the one cluster, or all
		return err
	}
	sigName, hasSig := r.Last("signal")
	choice, err := chooseSignal(sigName, hasSig, r.Has("batch"), r.Has("full"))
	if err != nil {
		fmt.Fprintln(s.stderr, err) // Slurm's words, without its "scancel: error: "
		return exitStatus(1)
	}
	words, steps, err := splitStepRefs(splitJobWords(r.Args))
	if err != nil {
		return err
	}
	ids, tasks, err := slurmJobRefs(words)
	if err != nil {
		return err
	}
	req := api.CancelRequest{IDs: ids, Tasks: tasks}
	req.User, _ = r.Last("user")
	if r.Has("me") {
		if req.User, err = currentUser(); err != nil {
			return err
		}
	}
	req.Name, _ = r.Last("name")
	if v, ok := r.Last("jobname"); ok {
		req.Name = v
	}
	for _, st := range commaList(r.All("state")) {
		state, err := api.ParseJobState(st)
		if err != nil || state.Terminal() {
			return slurmErrorf("Invalid job state specified: %s (PENDING, RUNNING or their short forms)", st)
		}
		req.States = append(req.States, state)
	}
	req.States = dedupeStates(req.States)
	local := localCancelFilter(r)
	jobsNamed := len(req.IDs)+len(req.Tasks) > 0 || req.User != "" || req.Name != "" || len(req.States) > 0 || local != nil
	if !jobsNamed && len(steps) == 0 {
		return slurmError("No job identification provided")
	}
	if !choice.cancel {
		return scancelSignal(s, r, choice, req, steps, local)
	}
	if len(steps) > 0 {
		ctx, cancel := s.requestContext()
		ok := cancelSteps(ctx, s.client(), steps, func(st stepTarget, err error) {
			if !r.Has("quiet") {
				fmt.Fprintf(s.stderr, "%s: error: Kill job error on job step id %s: %s\n", s.prog, st, oneLine(err.Error()))
			}
		})
		cancel()
		if !jobsNamed {
			if !ok {
				return exitStatus(1)
			}
			return nil
		}
	}
	if local != nil {
		// The controller filters by user, name and state; the rest is
		// done here, and the jobs that pass are cancelled by ID.
		if err := local.resolve(s, &req); err != nil {
			return err
		}
		if len(req.IDs)+len(req.Tasks) == 0 {
			return nil // nothing matched, as scancel says nothing then
		}
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := s.client().Cancel(ctx, req)
	if err != nil {
		return err
	}
	if len(resp.Errors) == 0 {
		return nil
	}
	// Given job IDs alone, Slurm's scancel passes over jobs that ended or
	// never were, saying so only with -v, and exits 0 for them: a
	// pipeline cancels what it submitted without asking what finished.
	// With a filter, a signal or steps it refuses them.
	plain := !hasSig && !r.Has("batch") && !r.Has("full") && len(steps) == 0 &&
		req.User == "" && req.Name == "" && len(req.States) == 0 && local == nil
	gone := map[uint64]bool{}
	if plain {
		for _, id := range resp.Gone {
			gone[id] = true
		}
	}
	if !r.Has("quiet") {
		failed := make([]uint64, 0, len(resp.Errors))
		for id := range resp.Errors {
			failed = append(failed, id)
		}
		sort.Slice(failed, func(a, b int) bool { return failed[a] < failed[b] })
		for _, id := range failed {
			if gone[id] && !r.Has("verbose") {
				continue
			}
			fmt.Fprintf(s.stderr, "%s: error: Kill job error on job id %d: %s\n", s.prog, id, oneLine(resp.Errors[id]))
		}
	}
	if plain && resp.GoneCount > 0 && resp.GoneCount >= max(resp.ErrorCount, len(resp.Errors)) {
		return nil
	}
	return exitStatus(1)
}

// scancelSignal sends a signal that does not end the jobs: to the jobs
// req names (its filters applied here, as the controller takes IDs only)
// and to steps.
func scancelSignal(s *slurmRun, r *slurmopt.Result, c signalChoice, req api.CancelRequest, steps []stepTarget, local *cancelFilter) error {
	if local == nil && (req.User != "" || req.Name != "" || len(req.States) > 0) {
		local = &cancelFilter{}
	}
	if local != nil {
		if err := local.resolve(s, &req); err != nil {
			return err
		}
		if len(req.IDs)+len(req.Tasks)+len(steps) == 0 {
			return nil // nothing matched, as scancel says nothing then
		}
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	ok, err := sendSignal(ctx, s.client(), c, req.IDs, req.Tasks, steps, func(ref string, step bool, msg string) {
		switch {
		case r.Has("quiet"):
		case ref == "":
			fmt.Fprintf(s.stderr, "%s: error: %s\n", s.prog, msg)
		case step:
			fmt.Fprintf(s.stderr, "%s: error: Kill job error on job step id %s: %s\n", s.prog, ref, oneLine(msg))
		default:
			fmt.Fprintf(s.stderr, "%s: error: Kill job error on job id %s: %s\n", s.prog, ref, oneLine(msg))
		}
	})
	if err != nil {
		return err
	}
	if !ok {
		return exitStatus(1)
	}
	return nil
}

// cancelFilter holds scancel's filters the controller does not apply.
type cancelFilter struct {
	partition, account, qos string
	nodes                   []string
}

func localCancelFilter(r *slurmopt.Result) *cancelFilter {
	f := &cancelFilter{}
	f.partition, _ = r.Last("partition")
	f.account, _ = r.Last("account")
	f.qos, _ = r.Last("qos")
	f.nodes = r.All("nodelist")
	if f.partition == "" && f.account == "" && f.qos == "" && len(f.nodes) == 0 {
		return nil
	}
	return f
}

// resolve lists the jobs req selects, keeps those that pass f, and
// names them in req by ID (whole jobs) or task (array tasks).
func (f *cancelFilter) resolve(s *slurmRun, req *api.CancelRequest) error {
	var onNodes []string
	for _, expr := range f.nodes {
		names, err := hostlist.Expand(expr)
		if err != nil {
			return fmt.Errorf("invalid node list %s: %v", expr, err)
		}
		onNodes = append(onNodes, names...)
	}
	filter := api.JobFilter{IDs: req.IDs, Tasks: req.Tasks, States: req.States}
	if req.User != "" {
		filter.Users = []string{req.User}
	}
	jobs, err := listJobsView(s, filter, "full") // squeue.go
	if err != nil {
		return err
	}
	req.IDs, req.Tasks = nil, nil
	for _, j := range expandArrays(jobs) { // jobref.go
		if f.partition != "" && j.Partition != f.partition || f.account != "" && j.Spec.Account != f.account ||
			f.qos != "" && j.Spec.QOS != f.qos || req.Name != "" && j.Name != req.Name {
			continue
		}
		if onNodes != nil && !slices.ContainsFunc(j.Nodes, func(n string) bool { return slices.Contains(onNodes, n) }) {
			continue
		}
		if j.ArrayTaskID != nil {
			req.Tasks = append(req.Tasks, api.TaskRef{JobID: j.ArrayJobID, Task: *j.ArrayTaskID})
		} else {
			req.IDs = append(req.IDs, j.ID)
		}
	}
	return nil
}
