package ctld

import (
	"runtime/debug"
	"sort"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/sched"
)

// job is the in-memory copy of one job. rec is replaced, never mutated in
// place, once it has been handed out: readers take a shallow copy of
// rec.Job under the read lock, so slices and pointers inside it must be
// fresh for every change (lifecycle.Next makes them so).
type job struct {
	rec    store.JobRecord
	launch launchState
	// cancelRequested: a signal went to the node; its end will be CANCELLED.
	cancelRequested bool
	// fromArray is set on an array task that is leaving its array's
	// pending remainder in the commit under way (queue.commit).
	fromArray *arrayJob
	// limitSignalled: the controller signalled the job at a time limit
	// lowered while it ran (see control.go).
	limitSignalled bool
}

// launchState follows the launch of the job's current start. It is not
// persisted: after a restart nothing is known about launches, and lost-job
// detection falls back to the start time (see job.lost).
type launchState struct {
	seq      uint64    // bumped per start; a late result for an older start is ignored
	inFlight bool      // the launch request has not been answered yet
	ackedAt  time.Time // when the node accepted it (launch answer or started event)
}

func (j *job) state() api.JobState { return j.rec.Job.State }

// batchHost is the node that runs the job's script: the first allocated
// node, as in Slurm. Only it is sent the launch and reports the job.
func (j *job) batchHost() string {
	if len(j.rec.Job.Nodes) == 0 {
		return ""
	}
	return j.rec.Job.Nodes[0]
}

// step is rec after ev, as package lifecycle has it. A start or a
// requeue begins a new run: the record's per-run flags (a requeue asked
// for, a lowered limit to enforce) go with the old one.
func step(rec store.JobRecord, ev lifecycle.Event, now time.Time) (store.JobRecord, error) {
	job, err := lifecycle.Next(rec.Job, ev, now)
	if err != nil {
		return rec, err
	}
	next := rec
	next.Job = job
	if ev.Kind == lifecycle.Start || ev.Kind.Requeues() {
		next.RequeueRequested, next.EnforceTimeLimit = false, false
	}
	return next, nil
}

// change is one job's next record, to be persisted before it is installed.
type change struct {
	j    *job
	next store.JobRecord
}

// commitLocked persists the changes in one transaction and, only once they
// are on disk, installs them in memory. On error nothing changes. The
// caller holds s.mu for writing.
func (s *Server) commitLocked(changes []change) error {
	return s.commitAllLocked(changes, nil)
}

// commitAllLocked is commitLocked that also writes array remainders (the
// queue's commit); waiters wake when it ended something.
func (s *Server) commitAllLocked(changes []change, rems []remChange) error {
	ended, err := s.q.commit(changes, rems)
	if ended {
		s.pipe.wakeWaiters()
	}
	return err
}

// partitions is the configured partitions with fast membership tests.
type partitions struct {
	list    []api.Partition
	byName  map[string]api.Partition
	members map[string]map[string]bool // partition -> node names (nil for ALL)
	def     string
}

func newPartitions(list []api.Partition) partitions {
	p := partitions{list: list, byName: make(map[string]api.Partition), members: make(map[string]map[string]bool)}
	for _, part := range list {
		p.byName[part.Name] = part
		if !part.AllNodes {
			set := make(map[string]bool, len(part.Nodes))
			for _, n := range part.Nodes {
				set[n] = true
			}
			p.members[part.Name] = set
		}
		if part.Default {
			p.def = part.Name
		}
	}
	return p
}

func (p partitions) contains(part, nodeName string) bool {
	if p.byName[part].AllNodes {
		return true
	}
	return p.members[part][nodeName]
}

// of lists the partitions that include nodeName, in configuration order.
func (p partitions) of(nodeName string) []string {
	var out []string
	for _, part := range p.list {
		if p.contains(part.Name, nodeName) {
			out = append(out, part.Name)
		}
	}
	return out
}

func (p partitions) names() []string {
	out := make([]string, len(p.list))
	for i, part := range p.list {
		out[i] = part.Name
	}
	return out
}

func sortNodes(nodes []*node) []*node {
	sort.Slice(nodes, func(a, b int) bool { return hostlist.Less(nodes[a].rec.Name, nodes[b].rec.Name) })
	return nodes
}

// load fills memory from the store. Known nodes start DOWN until they
// register again.
func (s *Server) load(now time.Time) error {
	s.pipe.init()
	if err := s.q.load(); err != nil {
		return err
	}
	nodes, err := s.store.Nodes()
	if err != nil {
		return err
	}
	s.nodes.load(nodes, now, s.parts, s.tls.nodeClient)
	// Everything is in memory now: neither the file's mapped pages nor the
	// decoding's garbage need to stay resident (docs/benchmarks.md, Load).
	if err := s.store.DropMappedPages(); err != nil {
		s.log.Printf("after loading: %v", err)
	}
	go debug.FreeOSMemory() // a full GC; serving need not wait for it
	return nil
}

// perNode is what a job needs on each of its nodes; FGPU is what it holds
// (or asks for) per node (gpus.go).
func perNode(j *api.Job) sched.Resources {
	return sched.Resources{CPUs: j.CPUs, MemBytes: j.MemBytes, FGPU: jobFGPUPerNode(j)}
}

// allocation is what running jobs hold on each node.
func (q *queue) allocation() map[string]sched.Resources {
	alloc := make(map[string]sched.Resources)
	for _, j := range q.unfinished() {
		if j.state() != api.StateRunning {
			continue
		}
		for _, n := range j.rec.Job.Nodes {
			alloc[n] = alloc[n].Add(perNode(&j.rec.Job))
		}
	}
	return alloc
}
