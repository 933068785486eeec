package ctld

import (
	"fmt"
	"iter"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
)

// Steps waiting for their nodes after their job's end (stepcommit.go):
// the queue keeps the jobs that have any (queue.closing), so that the
// housekeeping sweep and a lost node reach them without walking every
// finished job. Nothing stays RUNNING forever: a node declared DOWN
// counts as lost (NODE_FAIL); the sweep asks a silent node, stepEndAsk
// after the job's end, whether it knows the step at all (srun may never
// have launched it there), and counts it CANCELLED when it does not;
// stepEndWait after the job's end every silent node counts CANCELLED,
// with that reason.
const (
	stepEndAsk  = 30 * time.Second
	stepEndWait = 5 * time.Minute
)

// noteClosing keeps q.closing, the jobs that ended with steps still
// waiting for their nodes, right for j.
func (q *queue) noteClosing(j *job) {
	id := j.rec.Job.ID
	for _, rec := range j.steps.running {
		if rec.JobEnd != nil {
			if q.closing == nil {
				q.closing = make(map[uint64]*job)
			}
			q.closing[id] = j
			return
		}
	}
	delete(q.closing, id)
}

// waitingSteps yields the steps of closing jobs waiting for their nodes.
func (q *queue) waitingSteps() iter.Seq[*store.StepRecord] {
	return func(yield func(*store.StepRecord) bool) {
		for _, j := range q.closing {
			for _, rec := range j.steps.running {
				if rec.JobEnd != nil && !yield(rec) {
					return
				}
			}
		}
	}
}

// silentNodes are the nodes of rec that have not reported.
func silentNodes(rec *store.StepRecord) []string {
	var out []string
	for _, n := range rec.Layout {
		if !reported(rec, n.Node) {
			out = append(out, n.Node)
		}
	}
	return out
}

func reported(rec *store.StepRecord, node string) bool {
	for _, r := range rec.Reports {
		if r.Node == node {
			return true
		}
	}
	return false
}

// lostStepParts are the records of waiting steps after the nodes in gone
// (silent past the node timeout, or set DOWN) are counted lost: a step
// whose last silent node is lost ends NODE_FAIL. The caller holds
// Server.mu and commits them.
func (q *queue) lostStepParts(gone map[string]bool, now time.Time) []*store.StepRecord {
	if len(gone) == 0 || len(q.closing) == 0 {
		return nil
	}
	var out []*store.StepRecord
	for rec := range q.waitingSteps() {
		next := rec
		for _, node := range silentNodes(rec) {
			if !gone[node] {
				continue
			}
			if n := stepAfterReport(next, store.StepNodeEnd{Node: node, Lost: true,
				Message: "node " + node + " was lost before it reported the step's end"}, now); n != nil {
				next = n
			}
		}
		if next != rec {
			out = append(out, next)
		}
	}
	return out
}

// overdueStep is a waiting step ended by the bound, and the nodes that
// had not reported.
type overdueStep struct {
	rec    *store.StepRecord
	silent []string
}

// overdueSteps are the waiting steps whose job ended stepEndWait ago or
// more, ended at their job's end with every silent node counted
// CANCELLED, with the reason. The caller holds Server.mu and commits
// them.
func (q *queue) overdueSteps(now time.Time) []overdueStep {
	var out []overdueStep
	for rec := range q.waitingSteps() {
		if now.Sub(rec.JobEnd.At) < stepEndWait {
			continue
		}
		o := overdueStep{rec: rec, silent: silentNodes(rec)}
		for _, node := range o.silent {
			if n := stepAfterReport(o.rec, store.StepNodeEnd{Node: node, State: api.StateCancelled,
				Message: fmt.Sprintf("the node did not report the step's end within %s of its job's end", stepEndWait)}, rec.JobEnd.At); n != nil {
				o.rec = n
			}
		}
		out = append(out, o)
	}
	return out
}

// expire ends the waiting steps past stepEndWait.
func (w stepSweep) expire(now time.Time) {
	s := w.srv
	s.mu.Lock()
	overdue := s.q.overdueSteps(now)
	recs := make([]*store.StepRecord, len(overdue))
	for i, o := range overdue {
		recs[i] = o.rec
	}
	err := s.q.commit(nil, nil, recs...)
	s.mu.Unlock()
	if err != nil {
		s.log.Printf("steps: ending %d steps whose nodes did not report after their job's end: %v", len(recs), err)
		return
	}
	for _, o := range overdue {
		st := &o.rec.Step
		s.log.Printf("end step %d.%s %s: node %s did not report within %s of the job's end",
			st.JobID, api.StepName(st.StepID), st.State, hostlist.Compress(o.silent), stepEndWait)
	}
}
