package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const squeueUsage = `Usage: squeue [OPTIONS]
  -A, --account=accounts     accounts of jobs to view (comma list)
  -a, --all                  accepted: corral shows every partition
  -r, --array                one job array element per line
  -h, --noheader             no headers on output
  -i, --iterate=seconds      repeat the report every N seconds
  -j, --jobs[=job_id]        job IDs to view (comma list; 12_3 is one task)
  -l, --long                 long report
      --me                   my jobs only
  -n, --name=job_name(s)     job names to view (comma list)
  -o, --format=format        format specification (%.18i %.9P ...)
  -O, --Format=format        format by field names (JobID:10,State,...)
  -p, --partition=partitions partitions to view (comma list)
  -q, --qos=qos(s)           qos to view (comma list)
  -S, --sort=fields          sort order (default P,t,-p)
      --start                expected start times of pending jobs
  -t, --states=states        job states to view (comma list, or all)
  -u, --user=user_name(s)    users to view (comma list)
  -w, --nodelist=hostlist    jobs on these nodes
      --json                 the listing as JSON (corral's job records)
  -V, --version              version
      --help                 this help
Options corral has no use for are accepted and ignored: --noconvert,
--local, --federation, --sibling, -v. See docs/slurm.md.
`

func squeueCommand() *slurmCommand {
	return &slurmCommand{
		usage: squeueUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'A', Long: "account", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'a', Long: "all"},
			slurmopt.Option{Short: 'r', Long: "array"},
			slurmopt.Option{Short: 'h', Long: "noheader"},
			slurmopt.Option{Short: 'i', Long: "iterate", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'j', Long: "jobs", Arg: slurmopt.OptionalArg},
			slurmopt.Option{Short: 'l', Long: "long"},
			slurmopt.Option{Long: "me"},
			slurmopt.Option{Short: 'n', Long: "name", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'o', Long: "format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'O', Long: "Format", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'p', Long: "partition", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'q', Long: "qos", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'S', Long: "sort", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "start"},
			slurmopt.Option{Short: 's', Long: "steps", Arg: slurmopt.OptionalArg},
			slurmopt.Option{Short: 't', Long: "states", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'u', Long: "user", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'w', Long: "nodelist", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Long: "json"},
			slurmopt.Option{Long: "noconvert"}, slurmopt.Option{Long: "local"},
			slurmopt.Option{Long: "hide"}, // corral has no hidden partitions
			// A job has one partition: -P lists it once anyway.
			slurmopt.Option{Short: 'P', Long: "priority"},
			slurmopt.Option{Long: "array-unique"}, // each pending task on its own line, as -r
			// corral has no reservations or licenses: a job with one is none.
			slurmopt.Option{Short: 'R', Long: "reservation", Arg: slurmopt.RequiredArg},
			slurmopt.Option{Short: 'L', Long: "licenses", Arg: slurmopt.RequiredArg},
			clusterOptions[0], clusterOptions[1],
			slurmopt.Option{Long: "federation"}, slurmopt.Option{Long: "sibling"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
		),
		run: squeue,
	}
}

// squeueQuery is what one squeue run asks for.
type squeueQuery struct {
	filter     api.JobFilter
	partitions []string
	names      []string
	accounts   []string
	qos        []string
	nodes      map[string]bool
	states     stateSelection
	layout     *slurmfmt.JobLayout
	sort       string
	start      bool
	array      bool
	// hideFinished: jobs named with -j and no -t are fetched finished or
	// not, to tell one that finished lately (not shown, as Slurm's
	// squeue shows a named job only in the states -t asks for, by
	// default the unfinished ones) from one it no longer knows (an
	// error).
	hideFinished bool
	cluster      bool // -M named the cluster: its CLUSTER line first
	none         bool // -R or -L: no corral job has a reservation or licenses
}

// slurmMinJobAge is how long after its end squeue still knows a job:
// slurmctld's MinJobAge default. A listing that may show finished jobs
// (-t all, a finished state) shows those that ended this lately, not
// the whole accounting history (sacct's), which a pipeline engine
// polling squeue -t all would read again at every poll.
const slurmMinJobAge = 300 * time.Second

func squeue(s *slurmRun, r *slurmopt.Result) error {
	// -j and -s take their value glued (-j12), but like squeue an
	// argument after them is their list (squeue -j 12).
	if len(r.Args) > 0 && (r.Has("jobs") || r.Has("steps")) {
		name := "jobs"
		if !r.Has("jobs") {
			name = "steps"
		}
		r.Sets = append(r.Sets, slurmopt.Set{Name: name, Value: r.Args[0], HasValue: true})
		r.Args = r.Args[1:]
	}
	if len(r.Args) > 0 {
		return slurmUsagef("Unrecognized option: %s", r.Args[0])
	}
	q, err := squeueParse(s, r)
	if err != nil {
		return err
	}
	if r.Has("steps") {
		return squeueSteps(s, r, q)
	}
	every := 0
	if v, ok := r.Last("iterate"); ok {
		if every, err = strconv.Atoi(v); err != nil || every <= 0 {
			return slurmUsagef("invalid --iterate value: %s", v)
		}
	}
	for {
		if err := squeueOnce(s, r, q); err != nil {
			return err
		}
		if every == 0 {
			return nil
		}
		fmt.Fprintln(s.stdout)
		if err := s.stdout.Flush(); err != nil {
			return err
		}
		select {
		case <-s.ctx.Done():
			return nil
		case <-time.After(time.Duration(every) * time.Second):
		}
	}
}

func squeueParse(s *slurmRun, r *slurmopt.Result) (*squeueQuery, error) {
	q := &squeueQuery{start: r.Has("start"), array: r.Has("array") || r.Has("array-unique"),
		none: r.Has("reservation") || r.Has("licenses")}
	var err error
	if q.cluster, err = clustersGiven(r); err != nil { // clusters.go
		return nil, err
	}
	if q.filter.Users, err = withMe(commaList(r.All("user")), r.Has("me")); err != nil { // queue.go
		return nil, err
	}
	sel, bad := parseSqueueStates(commaList(r.All("states"))) // squeuestates.go
	if bad != "" {
		fmt.Fprintf(s.stderr, "%s: error: Invalid job state specified: %s\n%[1]s: error: Valid job states include: %[3]s\n", s.prog, bad, squeueStateList)
		return nil, exitStatus(1)
	}
	sel.apply(&q.filter)
	q.states = sel
	ids, tasks, err := slurmJobRefs(r.All("jobs"))
	if err != nil {
		return nil, err
	}
	q.filter.IDs, q.filter.Tasks = ids, tasks
	if len(ids)+len(tasks) > 0 && !q.filter.All && len(q.filter.States) == 0 && !q.filter.Completing {
		q.filter.All, q.hideFinished = true, true
	}
	q.partitions = commaList(r.All("partition"))
	q.names = commaList(r.All("name"))
	q.accounts = commaList(r.All("account"))
	q.qos = commaList(r.All("qos"))
	if list := r.All("nodelist"); len(list) > 0 {
		q.nodes = map[string]bool{}
		for _, expr := range list {
			names, err := hostlist.Expand(expr)
			if err != nil {
				return nil, fmt.Errorf("invalid node list %s: %v", expr, err)
			}
			for _, n := range names {
				q.nodes[n] = true
			}
		}
	}

	var fields []slurmfmt.Field
	names := false
	switch {
	case r.Has("Format"):
		v, _ := r.Last("Format")
		fields, names = slurmfmt.ParseNames(v), true
	case r.Has("format"):
		v, _ := r.Last("format")
		if fields = slurmfmt.ParsePercent(v); v == "%all" {
			fields = slurmfmt.AllFields()
		}
	case q.start:
		fields = slurmfmt.ParsePercent(slurmfmt.SqueueStart)
	case r.Has("long"):
		fields = slurmfmt.ParsePercent(slurmfmt.SqueueLong)
	case os.Getenv("SQUEUE_FORMAT2") != "":
		fields, names = slurmfmt.ParseNames(os.Getenv("SQUEUE_FORMAT2")), true
	case os.Getenv("SQUEUE_FORMAT") != "":
		fields = slurmfmt.ParsePercent(os.Getenv("SQUEUE_FORMAT"))
	default:
		fields = slurmfmt.ParsePercent(slurmfmt.SqueueDefault)
	}
	layout, unknown := slurmfmt.NewJobLayout(fields, names)
	for _, u := range unknown {
		fmt.Fprintf(s.stderr, "%s: error: Invalid job format specification: %s\n", s.prog, u)
	}
	q.layout = layout
	q.sort = slurmfmt.SqueueSort
	if v, ok := r.Last("sort"); ok {
		q.sort = v
	} else if v := os.Getenv("SQUEUE_SORT"); v != "" {
		q.sort = v
	}
	return q, nil
}

// view is the listing view the query needs: the brief one unless a
// field, a sort key or a filter needs more. The brief view has what
// squeue's default order (partition, state, priority) sorts by: decoding
// the whole record instead cost squeue -h -o %i a fifth of its CPU time.
func (q *squeueQuery) view(json bool) string {
	need := q.layout.Need
	briefKeys := strings.IndexFunc(q.sort, func(c rune) bool { return !strings.ContainsRune("+-, iAjuPtTMDNrpQ", c) }) < 0
	if q.start || !briefKeys {
		need = max(need, slurmfmt.NeedSummary)
	}
	if len(q.accounts)+len(q.qos) > 0 || q.array || json {
		need = slurmfmt.NeedFull
	}
	switch need {
	case slurmfmt.NeedBrief:
		return "brief"
	case slurmfmt.NeedSummary:
		return "summary"
	}
	return "full"
}

func squeueOnce(s *slurmRun, r *slurmopt.Result, q *squeueQuery) error {
	f := q.filter
	if f.All || slices.ContainsFunc(f.States, api.JobState.Terminal) {
		f.EndedSince = time.Now().Add(-slurmMinJobAge)
	}
	jobs, err := listJobsView(s, f, q.view(r.Has("json")))
	if err != nil {
		return err
	}
	if len(jobs) == 0 && len(f.IDs)+len(f.Tasks) == 1 && len(f.States) == 0 {
		// squeue -j ID asks for that one job, and says so when it knows
		// none (or it ended more than slurmMinJobAge ago); pipeline
		// engines read this line as "the job is gone".
		fmt.Fprintln(s.stderr, "slurm_load_jobs error: Invalid job id specified")
		return exitStatus(1)
	}
	if q.hideFinished {
		jobs = slices.DeleteFunc(jobs, func(j api.Job) bool { return j.State.Terminal() && !j.Completing })
	}
	if q.array {
		jobs = expandArrays(jobs) // jobref.go
	}
	jobs = slices.DeleteFunc(jobs, func(j api.Job) bool { return !q.keep(&j) })
	now := time.Now()
	if q.start {
		jobs = slices.DeleteFunc(jobs, func(j api.Job) bool { return j.State != api.StatePending })
		q.sort = "S"
	}
	if err := slurmfmt.SortJobs(jobs, q.sort, now); err != nil {
		return slurmError(strings.Replace(err.Error(), "invalid sort", "Invalid sort", 1))
	}
	if r.Has("json") {
		return writeJSON(s.stdout, jobs)
	}
	env := &slurmfmt.Env{Now: now, Group: groupName}
	if !r.Has("noheader") {
		if r.Has("long") || r.Has("iterate") {
			s.stdout.WriteString(slurmfmt.Ctime(now)) // squeue dates a long or repeated report
		}
		if q.cluster {
			s.stdout.WriteString(clusterLine)
		}
		s.stdout.WriteString(q.layout.Header())
		s.stdout.WriteByte('\n')
	}
	for i := range jobs {
		s.stdout.WriteString(q.layout.Row(&jobs[i], env))
		s.stdout.WriteByte('\n')
	}
	return nil
}

// keep applies the filters the controller does not.
func (q *squeueQuery) keep(j *api.Job) bool {
	if q.none || !q.states.matches(j) ||
		len(q.partitions) > 0 && !slices.Contains(q.partitions, j.Partition) ||
		len(q.names) > 0 && !slices.Contains(q.names, j.Name) ||
		len(q.accounts) > 0 && !slices.Contains(q.accounts, j.Spec.Account) ||
		len(q.qos) > 0 && !slices.Contains(q.qos, j.Spec.QOS) {
		return false
	}
	if q.nodes != nil {
		for _, n := range j.Nodes {
			if q.nodes[n] {
				return true
			}
		}
		return false
	}
	return true
}

// listJobsView lists jobs in view ("brief", "summary" or "full"),
// falling back to the whole record from a controller that knows no
// views.
func listJobsView(s *slurmRun, f api.JobFilter, view string) ([]api.Job, error) {
	ctx, cancel := s.requestContext()
	defer cancel()
	if view == "full" {
		view = ""
	}
	raw, err := jobsRaw(ctx, s.client(), f, view) // queuefast.go
	var se *api.StatusError
	if view != "" && errors.As(err, &se) && se.Code == http.StatusBadRequest && strings.Contains(se.Message, "view") {
		view = ""
		raw, err = jobsRaw(ctx, s.client(), f, view)
	}
	if err != nil {
		return nil, err
	}
	if view == "brief" {
		var briefs []api.JobBrief
		if err := json.Unmarshal(raw, &briefs); err != nil {
			return nil, err
		}
		jobs := make([]api.Job, len(briefs))
		for i := range briefs {
			jobs[i] = briefs[i].Job()
		}
		return jobs, nil
	}
	var jobs []api.Job
	if err := json.Unmarshal(raw, &jobs); err != nil {
		return nil, err
	}
	if jobs == nil {
		jobs = []api.Job{}
	}
	return jobs, nil
}

// squeueSteps is squeue -s: the running steps of the running jobs the
// query selects (-s LIST: of these steps only, JOB.STEP).
func squeueSteps(s *slurmRun, r *slurmopt.Result, q *squeueQuery) error {
	only := map[string]bool{}
	for _, ref := range commaList(r.All("steps")) {
		only[ref] = true
	}
	format := slurmfmt.SqueueSteps
	if v, ok := r.Last("format"); ok {
		format = v
	}
	layout, unknown := slurmfmt.NewStepLayout(format)
	for _, u := range unknown {
		fmt.Fprintf(s.stderr, "%s: error: Invalid job format specification: %s\n", s.prog, u)
	}
	rows, err := runningSteps(s, q.filter, q.keep)
	if err != nil {
		return err
	}
	if !r.Has("noheader") {
		fmt.Fprintln(s.stdout, layout.Header())
	}
	env := &slurmfmt.Env{Now: time.Now()}
	for i := range rows {
		if len(only) > 0 && !only[stepRef(&rows[i])] {
			continue
		}
		fmt.Fprintln(s.stdout, layout.Row(&rows[i], env))
	}
	return nil
}

// runningSteps are the running steps of the jobs f selects and keep
// keeps: the running jobs, and the finished ones whose steps still wait
// for their nodes' reports (Slurm lists a completing job's steps,
// RUNNING). Listings leave steps out, so each job is asked for its own.
func runningSteps(s *slurmRun, f api.JobFilter, keep func(*api.Job) bool) ([]slurmfmt.StepRow, error) {
	f.States, f.All, f.WithSteps = nil, false, true
	jobs, err := listJobsView(s, f, "brief")
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	var rows []slurmfmt.StepRow
	for i := range jobs {
		if !keep(&jobs[i]) {
			continue
		}
		j, err := s.client().JobRef(ctx, api.JobRefText(&jobs[i]))
		var se *api.StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			continue // ended in the meantime
		}
		if err != nil {
			return nil, err
		}
		for k := range j.Steps {
			rows = append(rows, slurmfmt.StepRow{Step: &j.Steps[k], Job: j})
		}
	}
	return rows, nil
}

// stepRef is a step as users name it: JOB.STEP.
func stepRef(r *slurmfmt.StepRow) string {
	return api.JobRefText(r.Job) + "." + strconv.Itoa(r.Step.StepID)
}

// jobsRaw is api.Client.Jobs without the decoding.
func jobsRaw(ctx context.Context, cl *api.Client, f api.JobFilter, view string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := cl.Do(ctx, http.MethodGet, api.JobsPath(f, view), nil, &raw)
	return raw, err
}
