package ctld

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/sched"
)

// checkRegister rejects registrations that would confuse everything else.
func checkRegister(req *api.RegisterRequest) error {
	switch {
	case req.Name == "" || strings.ContainsAny(req.Name, " \t\n,[]/"):
		return fmt.Errorf("invalid node name %q", req.Name)
	case req.Addr == "":
		return fmt.Errorf("node %s sent no address", req.Name)
	case req.CPUs < 1:
		return fmt.Errorf("node %s reports %d CPUs; at least 1 is needed", req.Name, req.CPUs)
	case req.MemBytes < 0:
		return fmt.Errorf("node %s reports negative memory", req.Name)
	case slices.ContainsFunc(req.MountRoots, func(r string) bool { return !filepath.IsAbs(r) }):
		return fmt.Errorf("node %s reports mount roots %q; each must be an absolute path", req.Name, req.MountRoots)
	}
	return checkRegisterGPUs(req)
}

// register handles a registration or heartbeat: the node record is stored
// (when new or changed) before the node is used, the node comes up, and
// its job list is reconciled with ours.
func (s *Server) register(req api.RegisterRequest) (api.RegisterResponse, error) {
	now := time.Now()
	resp := api.RegisterResponse{HeartbeatInterval: s.cfg.Heartbeat.Milliseconds()}
	rec := store.NodeRecord{Name: req.Name, Addr: req.Addr, CPUs: req.CPUs, MemBytes: req.MemBytes,
		BootID: req.BootID, LastSeen: now, GPUs: req.GPUs, FGPUPerGPUHundredths: req.FGPUPerGPUHundredths,
		MountRoots: req.MountRoots}

	s.mu.RLock()
	persist := s.nodes.mustPersist(&rec, now)
	s.mu.RUnlock()
	if persist {
		if err := s.store.PutNodes(rec); err != nil {
			return resp, err
		}
	}

	s.mu.Lock()
	n, rebooted, capChanged, rewrite := s.nodes.heard(&rec, s.parts, s.tls.nodeClient, persist, now)
	if rewrite { // drained, downed or resumed since: make sure the disk has it last
		if err := s.store.PutNodes(rec); err != nil {
			s.mu.Unlock()
			return resp, err
		}
	}
	cameUp := s.nodes.registered(n, rec, req.Running, now)
	freed := s.pipe.reported(req.Name, req.Running)
	kill, lost := s.reconcileLocked(n, req.Running, now)
	err := s.q.commit(lost, nil)
	freed = s.q.reconcileParts(req.Name, req.Running, cameUp, now, lostGrace(s.cfg.Heartbeat)) || freed
	s.mu.Unlock()
	if err != nil {
		return resp, err
	}
	resp.Kill = kill
	if cameUp {
		s.log.Printf("node %s up addr=%s cpus=%d mem=%s boot=%s", req.Name, req.Addr, req.CPUs, config.FormatSize(req.MemBytes), req.BootID)
	} else if rebooted {
		s.log.Printf("node %s restarted (boot %s)", req.Name, req.BootID)
	}
	for _, c := range lost {
		_, next := c.jobs()
		s.log.Printf("end job %d %s: node %s does not report it", next.ID, next.State, req.Name)
	}
	if len(kill) > 0 {
		s.log.Printf("node %s: told to kill jobs %v that are not running there", req.Name, kill)
	}
	if cameUp || capChanged || freed || len(lost) > 0 {
		s.Kick()
	}
	return resp, nil
}

// reconcileLocked compares the jobs a node runs with ours. Jobs it runs
// that we do not have RUNNING there (finished, cancelled while it was away,
// requeued, unknown) are to be killed. Jobs we have RUNNING there that it
// does not report are lost and end NODE_FAIL, but only once that cannot be
// a launch still on its way (see job.lost).
func (s *Server) reconcileLocked(n *node, running []uint64, now time.Time) (kill []uint64, lost []change) {
	reported := make(map[uint64]bool, len(running))
	for _, id := range running {
		reported[id] = true
		j := s.q.job(id)
		if j == nil || !j.state().Holds() || !j.runsOn(n.name()) {
			kill = append(kill, id)
		}
	}
	for id, j := range s.q.unfinished() {
		if !j.state().Holds() || !j.runsOn(n.name()) {
			continue
		}
		if n.declaredDown() { // declared dead (corral down): its runs are gone whatever it says
			lost = s.appendFailed(lost, j, now, downedMessage(n))
			if reported[id] {
				kill = append(kill, id)
			}
			continue
		}
		if reported[id] {
			continue
		}
		if j.lost(now, lostGrace(s.cfg.Heartbeat)) {
			lost = s.appendFailed(lost, j, now, "node "+n.name()+" does not report the job")
		}
	}
	slices.Sort(kill)
	return kill, lost
}

// lostGrace is how long after a launch was acknowledged (or, when that is
// unknown, after the start) a job may be missing from its node's report
// before it is judged lost. A heartbeat the node built just before it
// accepted the launch may arrive after the acknowledgement; a few heartbeat
// intervals cover that race with room to spare.
func lostGrace(heartbeat time.Duration) time.Duration {
	return max(5*heartbeat, 5*time.Second)
}

// lost decides whether a RUNNING job its node does not report is lost.
// Never while its launch is in flight: the launch answer decides
// (success: the node has it; failure: the job goes back to PENDING).
// After an acknowledgement, once grace (lostGrace) has passed. If nothing
// is known about the launch (the controller restarted since), once grace
// has passed since the start: a launch that died with the old controller
// never reached the node, and the job must not stay RUNNING forever.
func (j *job) lost(now time.Time, grace time.Duration) bool {
	if j.launch.inFlight > 0 {
		return false
	}
	since := j.launch.ackedAt
	if since.IsZero() && j.rec.Job.StartTime != nil {
		since = *j.rec.Job.StartTime
	}
	return now.Sub(since) > grace
}

// appendFailed adds the end of a running job that its node lost to lost:
// NODE_FAIL (requeued, if it asks for that), or CANCELLED when a cancel
// was already on its way.
func (s *Server) appendFailed(lost []change, j *job, now time.Time, msg string) []change {
	ev := lifecycle.Event{Kind: lifecycle.NodeFail, Message: msg}
	switch {
	case j.cancelRequested:
		ev = lifecycle.Event{Kind: lifecycle.Cancel, Message: "cancelled; " + msg}
	case s.requeueOnNodeFail(j):
		ev.Kind = lifecycle.NodeFailRequeue
	}
	next, err := step(j.rec, ev, now)
	if err != nil { // callers pass RUNNING jobs: not reached
		s.log.Printf("job %d: %s: %v", j.rec.Job.ID, msg, err)
		return lost
	}
	return append(lost, change{j, next})
}

// lostOnLocked ends (NODE_FAIL, or requeued) every job ctld has RUNNING
// on a node in gone (silent, or set DOWN), with why(node) as its message.
func (s *Server) lostOnLocked(gone map[string]bool, now time.Time, why func(node string) string) []change {
	if len(gone) == 0 {
		return nil
	}
	var lost []change
	for _, j := range s.q.unfinished() {
		if !j.state().Holds() {
			continue
		}
		for _, name := range j.rec.Job.Nodes {
			if gone[name] {
				lost = s.appendFailed(lost, j, now, why(name))
				break
			}
		}
	}
	return lost
}

// watchNodes declares nodes that miss heartbeats DOWN and ends their
// running jobs NODE_FAIL.
func (s *Server) watchNodes(ctx context.Context) {
	t := time.NewTicker(min(max(s.cfg.NodeTimeout/4, 10*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.sweepNodes(now)
		}
	}
}

func (s *Server) sweepNodes(now time.Time) {
	s.mu.Lock()
	down, silent := s.nodes.markSilent(now, s.cfg.NodeTimeout)
	lost := s.lostOnLocked(silent, now, func(name string) string { return "node " + name + " is not responding" })
	parts := stepUpdates{recs: s.q.lostStepParts(silent, now)}
	err := s.q.commit(lost, nil, parts.recs...)
	s.q.partsGoneOn(silent)
	s.mu.Unlock()
	sort.Strings(down)
	for _, name := range down {
		s.log.Printf("node %s down: %s", name, reasonNotResponding)
	}
	if err != nil {
		s.log.Printf("ending jobs of silent nodes: %v", err)
		return
	}
	for _, c := range lost {
		_, next := c.jobs()
		s.log.Printf("end job %d %s: %s", next.ID, next.State, next.Message)
	}
	parts.logEnds(s.log)
	if len(lost) > 0 || len(down) > 0 {
		s.Kick()
	}
}

// listNodes is GET /v1/nodes.
func (s *Server) listNodes() []api.Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	alloc := s.q.allocation()
	jobsOn := make(map[string][]uint64)
	for id, j := range s.q.runningJobs() { // RUNNING and SUSPENDED: those that hold nodes
		for _, name := range j.rec.Job.Nodes {
			jobsOn[name] = append(jobsOn[name], id)
		}
	}
	stoppingOn := make(map[string]int)
	stopHeld := make(map[string]sched.Resources)
	for k, p := range s.q.stoppingParts() { // and the parts of ended runs still stopping
		jobsOn[k.node] = append(jobsOn[k.node], k.id)
		stoppingOn[k.node]++
		stopHeld[k.node] = stopHeld[k.node].Add(perNode(p.run))
	}
	held, gpuJobs := s.q.heldGPUs(), s.q.gpuJobs()
	out := make([]api.Node, 0, s.nodes.count())
	for name, n := range s.nodes.all() {
		ids := jobsOn[name]
		slices.Sort(ids)
		v := n.view(name, alloc[name], stopHeld[name], ids, stoppingOn[name])
		v.FGPUHundredths, v.AllocFGPUHundredths, v.FGPUPerGPUHundredths, v.GPUs = n.gpuView(name, s.parts, held, gpuJobs)
		v.Features = slices.Clone(s.parts.features[name])
		out = append(out, v)
	}
	sort.Slice(out, func(a, b int) bool { return hostlist.Less(out[a].Name, out[b].Name) })
	return out
}
