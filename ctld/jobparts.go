package ctld

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// A job runs on every node of its allocation (docs/steps.md): the first
// node runs the batch script (api.RoleBatch), the others hold the
// allocation for steps (api.RoleExtern, Slurm's extern step); an
// allocation job (salloc's) holds it on every node. Each part
// is launched on its node; the job ends when the batch script ends (or is
// cancelled, or times out), and then ctld stops the other parts. An
// extern part that ends while the job runs, without ctld asking, is its
// node failing the job, as a lost node is. A one-node job has only its
// batch part and is launched and stopped as it always was.

// ClusterName is SLURM_CLUSTER_NAME in every job: corral runs one
// cluster.
const ClusterName = api.ClusterName

// runsOn reports whether node is one of j's nodes.
func (j *job) runsOn(node string) bool { return slices.Contains(j.rec.Job.Nodes, node) }

// isExtern reports whether node runs one of j's extern parts.
func (j *job) isExtern(node string) bool {
	return node != j.batchHost() && j.runsOn(node)
}

// launchOrders are the launches of a job just started: one per node, the
// batch host's first. The caller holds Server.mu for writing.
func launchOrders(j *job, nodes *nodeRegistry) []launchOrder {
	hosts := j.rec.Job.Nodes
	j.launch = launchState{seq: j.launch.seq + 1, inFlight: len(hosts)}
	out := make([]launchOrder, len(hosts))
	for i, host := range hosts {
		out[i] = launchOrder{id: j.rec.Job.ID, seq: j.launch.seq, node: host,
			client: nodes.client(host), req: launchRequestOn(j, i)}
	}
	return out
}

// launchRequestOn is what node i of j's allocation is sent: the batch
// script on node 0, the extern part elsewhere, with the allocation's
// task layout for the batch environment.
func launchRequestOn(j *job, i int) api.LaunchRequest {
	req := launchRequest(j)
	job, spec := &j.rec.Job, &j.rec.Job.Spec
	req.Role, req.NodeIndex = api.RoleBatch, i
	if i > 0 || spec.Allocation { // an allocation's client runs its work
		req.Role = api.RoleExtern
	}
	req.Ntasks, req.NtasksPerNode, req.CPUsPerTask = spec.Ntasks, spec.NtasksPerNode, spec.CPUsPerTask
	req.SubmitHost, req.ClusterName = spec.SubmitHost, ClusterName
	req.TasksPerNode = jobspec.TasksPerNode(spec.Ntasks, spec.NtasksPerNode, len(job.Nodes))
	req.CPUsPerNode = make([]int, len(job.Nodes))
	for n := range req.CPUsPerNode {
		req.CPUsPerNode[n] = job.CPUs
	}
	req.GPUs, req.FGPUPerGPUHundredths = nil, 0
	addGPULaunchOn(j, job.Nodes[i], &req)
	return req
}

// stoppedJob is a job of several nodes that a commit took out of
// RUNNING, with its nodes and its run's record as they were, and when
// the run ended.
type stoppedJob struct {
	id    uint64
	nodes []string
	run   *api.Job
	end   time.Time
}

// stoppedParts are the jobs of several nodes that the changes take out of
// RUNNING; called before they are installed.
func stoppedParts(changes []change, now time.Time) []stoppedJob {
	var out []stoppedJob
	for _, c := range changes {
		if nodes := c.j.rec.Job.Nodes; c.j.state().Holds() && !c.next.Job.State.Holds() && len(nodes) > 1 {
			run, end := c.j.rec.Job, now // a copy: the job's record is replaced
			if e := c.next.Job.EndTime; e != nil {
				end = *e
			}
			out = append(out, stoppedJob{id: run.ID, nodes: nodes, run: &run, end: end})
		}
	}
	return out
}

// partsStopper is the queue's stopped hook: every up node of each job is
// told to stop its part, once the commit is on disk. Stopping is
// idempotent on a node, so the node whose report ended the job may hear
// it too; one that cannot be reached is told by its next registration,
// which names the jobs it must kill. It runs under Server.mu.
func partsStopper(s *Server) func([]stoppedJob) {
	return func(stopped []stoppedJob) {
		for _, sj := range stopped {
			for _, name := range sj.nodes {
				if !s.nodes.isUp(name) { // it holds nothing for the planner
					s.q.partGone(sj.id, name)
					continue
				}
				o := s.nodes.signalOrder(sj.id, name)
				s.bg.Add(1)
				go func() {
					defer s.bg.Done()
					if err := o.stop(s.bgCtx); err != nil {
						s.log.Printf("job %d ended: stopping its part on %s: %v", o.id, o.node, err)
					}
				}()
			}
		}
	}
}

// stop asks the order's node to end its part of the job.
func (o signalOrder) stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	return o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
}

// externEnded says why an extern part's own end fails its job, as when
// its node is lost; ok is false for an end that changes nothing: one from
// before the job's present run (a part of an earlier run, stopped late),
// or one at the time limit, which every node of the job enforces and the
// batch part's own TIMEOUT is about to report.
func externEnded(j *job, ev api.JobEvent) (msg string, ok bool) {
	if st := j.rec.Job.StartTime; st != nil && !ev.Time.IsZero() && ev.Time.Before(*st) {
		return "", false
	}
	if ev.State == api.StateTimeout {
		return "", false
	}
	msg = "node " + ev.Node + " lost its part of the job"
	if ev.Message != "" {
		msg += ": " + ev.Message
	}
	return msg, true
}
