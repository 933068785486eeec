package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

const scontrolUsage = `Usage: scontrol [OPTIONS] COMMAND [ARGUMENTS]
Commands corral answers:
  show job [ID]             every job's record, or one's (also: show jobid)
  show node [NAME]          every node's record, or one's
  show partition [NAME]     every partition's record, or one's
  show hostnames [LIST]     one host name per line (LIST: $SLURM_JOB_NODELIST)
  show hostlist LIST        the hostlist expression of names (also hostlistsorted)
  show step [JOB[.STEP]]    running steps
  show config               the controller's settings, under Slurm's names
  hold ID...                keep pending jobs from starting
  release ID...             let held jobs start
  requeue ID...             put jobs back to pending (requeuehold: and hold them)
  suspend ID...             freeze running jobs (operators and administrators)
  resume ID...              let suspended jobs run on
  update JobId=ID KEY=VALUE...  TimeLimit=, Nice=, Name= (JobName=)
  update NodeName=LIST State=DRAIN|DOWN|RESUME [Reason=TEXT]  (administrators)
  ping                      is the controller up
  version                   version
Options:
  -d, --details   accepted (records already show what corral has)
  -o, --oneliner  one line per record
  -Q, --quiet     no error messages for refused jobs
  -V, --version   version
  -h, --help      this help
See docs/slurm.md for what corral has and lacks.
`

func scontrolCommand() *slurmCommand {
	return &slurmCommand{
		usage: scontrolUsage,
		opts: withCommon(
			slurmopt.Option{Short: 'a', Long: "all"},
			slurmopt.Option{Short: 'h', Long: "help"},
			slurmopt.Option{Short: 'd', Long: "details"},
			slurmopt.Option{Short: 'o', Long: "oneliner"},
			slurmopt.Option{Short: 'Q', Long: "quiet"},
			slurmopt.Option{Short: 'v', Long: "verbose"},
			slurmopt.Option{Long: "json"},
		),
		run: scontrol,
	}
}

func scontrol(s *slurmRun, r *slurmopt.Result) error {
	if r.Has("json") {
		return errors.New("--json is not supported by corral's scontrol: use corral show job ID --json")
	}
	if len(r.Args) == 0 {
		return slurmUsagef("no command given (interactive scontrol is not supported)")
	}
	cmd, args := strings.ToLower(r.Args[0]), r.Args[1:]
	switch cmd {
	case "show":
		return scontrolShow(s, r, args)
	case "hold", "release", "requeue", "suspend", "resume":
		return scontrolControl(s, r, cmd, args)
	case "requeuehold":
		if err := scontrolControl(s, r, "requeue", args); err != nil {
			return err
		}
		return scontrolControl(s, r, "hold", args)
	case "update":
		return scontrolUpdate(s, r, args)
	case "ping":
		return scontrolPing(s)
	case "wait_job":
		return scontrolWaitJob(s, args) // scontrolwait.go
	case "version":
		_, err := fmt.Fprintf(s.stdout, "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		return err
	}
	return fmt.Errorf("invalid command: %s (corral's scontrol answers show, hold, release, requeue, suspend, resume, update, wait_job, ping and version)", r.Args[0])
}

func scontrolShow(s *slurmRun, r *slurmopt.Result, args []string) error {
	if len(args) == 0 {
		return slurmUsagef("show what? (job, node, partition, step, config, hostnames, hostlist)")
	}
	entity, rest := showEntity(args[0]), args[1:]
	if len(rest) > 1 {
		return slurmUsagef("too many arguments for show %s", entity)
	}
	name := ""
	if len(rest) == 1 {
		name = rest[0]
	}
	oneliner := r.Has("oneliner")
	switch entity {
	case "hostnames":
		return showHostnames(s, name)
	case "hostlist", "hostlistsorted":
		if name == "" {
			return slurmUsagef("show %s needs a list of host names", entity)
		}
		names, err := hostlist.Expand(name)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(s.stdout, hostlist.Compress(names))
		return err
	case "jobs":
		return showJobs(s, name, oneliner)
	case "nodes":
		return showNodes(s, name, oneliner)
	case "partitions":
		return showPartitions(s, name, oneliner)
	case "steps":
		return showSteps(s, name, oneliner)
	case "config":
		return showConfig(s) // a parameter named after it is ignored, as by Slurm's
	case "reservations": // corral has none
		if name != "" {
			fmt.Fprintf(s.stdout, "Reservation %s not found\n", name)
			return exitStatus(1)
		}
		_, err := fmt.Fprintln(s.stdout, "No reservations in the system")
		return err
	case "licenses": // nor licenses
		_, err := fmt.Fprintln(s.stdout, "No licenses configured in Slurm.")
		return err
	case "burstbuffer": // nor burst buffers: Slurm prints nothing then
		return nil
	}
	return fmt.Errorf("invalid entity: %s for keyword: show (corral shows job, node, partition, step, config, hostnames, hostlist, reservation, licenses and burstbuffer)", args[0])
}

// showEntities are the entities scontrol show knows, in the order
// Slurm's scontrol tries them, each with the fewest letters that name it:
// a word names the first entity it begins with, in any case, if it has
// at least that many letters (show hostname, show j 12, show part).
var showEntities = []struct {
	word, entity string
	least        int
}{
	{"burstbuffer", "burstbuffer", 2}, {"config", "config", 1},
	{"hostnames", "hostnames", 5}, {"hostlist", "hostlist", 5}, {"hostlistsorted", "hostlistsorted", 9},
	{"jobs", "jobs", 1}, {"jobid", "jobs", 1}, {"licenses", "licenses", 2}, {"nodes", "nodes", 1},
	{"partitions", "partitions", 2}, {"partitionname", "partitions", 2},
	{"reservations", "reservations", 1}, {"reservationname", "reservations", 1}, {"steps", "steps", 2},
}

// showEntity is the entity word names, or word itself (refused later).
func showEntity(word string) string {
	w := strings.ToLower(word)
	for _, e := range showEntities {
		if len(w) >= e.least && strings.HasPrefix(e.word, w) {
			return e.entity
		}
	}
	return w
}

// showHostnames prints each name of list (default $SLURM_JOB_NODELIST)
// on its own line.
func showHostnames(s *slurmRun, list string) error {
	if list == "" {
		list = os.Getenv("SLURM_JOB_NODELIST")
		if list == "" {
			return errors.New("host list is empty (give one or set SLURM_JOB_NODELIST)")
		}
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(s.stdout, n)
	}
	return nil
}

func showJobs(s *slurmRun, ref string, oneliner bool) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	var jobs []api.Job
	if ref != "" {
		id, task, err := api.ParseJobRef(ref)
		if err != nil {
			return err
		}
		if task == nil {
			// An array job's ID shows every task of it, as in Slurm.
			if jobs, err = s.client().Jobs(ctx, api.JobFilter{IDs: []uint64{id}, All: true}); err != nil {
				return err
			}
			sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
		}
		if len(jobs) == 0 {
			j, err := s.client().JobRef(ctx, refText(id, task))
			var se *api.StatusError
			if errors.As(err, &se) && se.Code == http.StatusNotFound {
				// Slurm's words, which scripts match to learn a job is gone.
				fmt.Fprintln(s.stderr, "slurm_load_jobs error: Invalid job id specified")
				return exitStatus(1)
			}
			if err != nil {
				return err
			}
			jobs = []api.Job{*j}
		}
	} else {
		var err error
		if jobs, err = s.client().Jobs(ctx, api.JobFilter{}); err != nil {
			return err
		}
		if len(jobs) == 0 {
			_, err := fmt.Fprintln(s.stdout, "No jobs in the system")
			return err
		}
		sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	}
	env := &slurmfmt.Env{Now: time.Now(), Group: groupName, OneLiner: oneliner}
	for i := range jobs {
		if err := slurmfmt.JobRecord(s.stdout, &jobs[i], env); err != nil {
			return err
		}
	}
	return nil
}

func showNodes(s *slurmRun, name string, oneliner bool) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	nodes, err := s.client().Nodes(ctx)
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(a, b int) bool { return hostlist.Less(nodes[a].Name, nodes[b].Name) })
	if name != "" {
		want, err := hostlist.Expand(name)
		if err != nil {
			return err
		}
		var picked []api.Node
		for _, n := range nodes {
			if slices.Contains(want, n.Name) {
				picked = append(picked, n)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(s.stdout, "Node %s not found\n", name) // on stdout, as scontrol prints it
			return exitStatus(1)
		}
		nodes = picked
	}
	env := &slurmfmt.Env{Now: time.Now(), OneLiner: oneliner}
	for i := range nodes {
		if err := slurmfmt.NodeRecord(s.stdout, &nodes[i], env); err != nil {
			return err
		}
	}
	return nil
}

func showPartitions(s *slurmRun, name string, oneliner bool) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	parts, nodes, err := partitionsAndNodes(ctx, s.client())
	if err != nil {
		return err
	}
	if name != "" {
		var picked []api.Partition
		for _, p := range parts {
			if p.Name == name {
				picked = append(picked, p)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(s.stdout, "Partition %s not found\n", name) // on stdout, as scontrol prints it
			return exitStatus(1)
		}
		parts = picked
	}
	for i := range parts {
		if err := slurmfmt.PartitionRecord(s.stdout, &parts[i], nodes, &slurmfmt.Env{OneLiner: oneliner}); err != nil {
			return err
		}
	}
	return nil
}

// showSteps prints the running steps: all, a job's (ID) or one
// (ID.STEP).
func showSteps(s *slurmRun, ref string, oneliner bool) error {
	var f api.JobFilter
	job, _, hasStep := strings.Cut(ref, ".")
	if job != "" {
		id, task, err := api.ParseJobRef(job)
		if err != nil {
			return err
		}
		if task != nil {
			f.Tasks = []api.TaskRef{{JobID: id, Task: *task}}
		} else {
			f.IDs = []uint64{id}
		}
	}
	rows, err := runningSteps(s, f, func(*api.Job) bool { return true }) // squeue.go
	if err != nil {
		return err
	}
	if hasStep {
		rows = slices.DeleteFunc(rows, func(r slurmfmt.StepRow) bool { return stepRef(&r) != ref })
	}
	if len(rows) == 0 {
		if ref != "" {
			return slurmErrorf("Invalid job id specified")
		}
		_, err := fmt.Fprintln(s.stdout, "No job steps in the system")
		return err
	}
	env := &slurmfmt.Env{Now: time.Now(), OneLiner: oneliner}
	for i := range rows {
		if err := slurmfmt.StepRecord(s.stdout, &rows[i], env); err != nil {
			return err
		}
	}
	return nil
}

// partitionsAndNodes fetches both, in name order.
func partitionsAndNodes(ctx context.Context, cl *api.Client) ([]api.Partition, []api.Node, error) {
	parts, err := cl.Partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := cl.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(nodes, func(a, b int) bool { return hostlist.Less(nodes[a].Name, nodes[b].Name) })
	return parts, nodes, nil
}

// scontrolControl is hold, release, requeue, suspend and resume: job
// IDs, apart or in comma lists. Suspend and resume print a refusal as
// Slurm's scontrol does ("Job is not suspended for job 12").
func scontrolControl(s *slurmRun, r *slurmopt.Result, action string, args []string) error {
	if len(args) == 0 {
		return slurmUsagef("%s needs job IDs", action)
	}
	ids, tasks, err := slurmJobRefs(args)
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := s.client().Control(ctx, action, api.JobsRequest{IDs: ids, Tasks: tasks})
	if err != nil {
		return err
	}
	if action != "suspend" && action != "resume" {
		return s.jobErrors(r.Has("quiet"), resp.Errors, resp.ErrorCount)
	}
	if len(resp.Errors) == 0 {
		return nil
	}
	if !r.Has("quiet") {
		refs := make([]string, 0, len(resp.Errors))
		for ref := range resp.Errors {
			refs = append(refs, ref)
		}
		sort.Slice(refs, func(a, b int) bool { return refLess(refs[a], refs[b]) })
		for _, ref := range refs {
			fmt.Fprintf(s.stderr, "%s for job %s\n", oneLine(resp.Errors[ref]), ref)
		}
	}
	return exitStatus(1)
}

func scontrolUpdate(s *slurmRun, r *slurmopt.Result, args []string) error {
	if len(args) < 2 {
		return slurmUsagef("update needs JobId=ID and at least one KEY=VALUE")
	}
	switch k, _, _ := strings.Cut(args[0], "="); {
	case strings.EqualFold(k, "NodeName"):
		return scontrolUpdateNodes(s, args)
	case !strings.EqualFold(k, "JobId"):
		return fmt.Errorf("corral's scontrol updates jobs (JobId=ID KEY=VALUE...) and nodes (NodeName=LIST State=DRAIN|DOWN|RESUME [Reason=TEXT])")
	}
	req, err := parseUpdate(args) // control.go
	if err != nil {
		return err
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	resp, err := updateJobs(ctx, s.client(), req)
	if err != nil {
		return err
	}
	return s.jobErrors(r.Has("quiet"), resp.Errors, resp.ErrorCount)
}

// scontrolUpdateNodes is `update NodeName=LIST State=DRAIN|DOWN|RESUME
// Reason=TEXT`: corral nodes drain, down and resume (administrators).
func scontrolUpdateNodes(s *slurmRun, args []string) error {
	var nodes, state, reason string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return slurmUsagef("%q is not KEY=VALUE", a)
		}
		switch strings.ToLower(k) {
		case "nodename":
			nodes = v
		case "state":
			state = strings.ToUpper(v)
		case "reason":
			reason = strings.TrimSpace(v)
		default:
			return fmt.Errorf("corral's scontrol update of nodes takes NodeName, State and Reason, not %s", k)
		}
	}
	if nodes == "" || state == "" {
		return slurmUsagef("update NodeName=LIST needs State=DRAIN, DOWN or RESUME")
	}
	ctx, cancel := s.requestContext()
	defer cancel()
	cl := s.client()
	var err error
	switch state {
	case "DRAIN", "DOWN":
		if reason == "" {
			return slurmError("You must specify a reason when DOWNING or DRAINING a node. Request denied")
		}
		req := api.DrainRequest{Nodes: []string{nodes}, Reason: reason}
		if state == "DRAIN" {
			_, err = cl.Drain(ctx, req)
		} else {
			_, err = cl.Down(ctx, req)
		}
	case "RESUME", "UNDRAIN", "IDLE":
		_, err = cl.Resume(ctx, api.ResumeRequest{Nodes: []string{nodes}})
	default:
		return fmt.Errorf("corral's nodes take State=DRAIN, DOWN or RESUME, not %s", state)
	}
	return err
}

// jobErrors prints the controller's refusals, one line each, in ID
// order, and fails the command when there was any.
func (s *slurmRun) jobErrors(quiet bool, errs map[string]string, total int) error {
	if len(errs) == 0 {
		return nil
	}
	if !quiet {
		refs := make([]string, 0, len(errs))
		for ref := range errs {
			refs = append(refs, ref)
		}
		sort.Slice(refs, func(a, b int) bool { return refLess(refs[a], refs[b]) })
		for _, ref := range refs {
			fmt.Fprintf(s.stderr, "%s: error: job %s: %s\n", s.prog, ref, oneLine(errs[ref]))
		}
		if total > len(errs) {
			fmt.Fprintf(s.stderr, "%s: error: %d more jobs refused (not listed)\n", s.prog, total-len(errs))
		}
	}
	return exitStatus(1)
}

// showConfig prints the controller's configuration.
func showConfig(s *slurmRun) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	c, err := s.client().Config(ctx)
	if err != nil {
		return err
	}
	return slurmfmt.WriteConfig(s.stdout, c, &slurmfmt.Env{Now: time.Now()})
}

func scontrolPing(s *slurmRun) error {
	ctx, cancel := s.requestContext()
	defer cancel()
	where := s.client().Socket
	if err := s.client().Do(ctx, http.MethodGet, "/v1/ping", nil, nil); err != nil {
		fmt.Fprintf(s.stdout, "Slurmctld(primary) at %s is DOWN\n", where)
		return exitStatus(1)
	}
	_, err := fmt.Fprintf(s.stdout, "Slurmctld(primary) at %s is UP\n", where)
	return err
}
