package ctld

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

// The controller ends a running job by asking its node to signal it: a
// cancel, a requeue, a time limit lowered while it ran. The node reports
// the end; a node that cannot be reached has the job ended here.

// signalTimeout bounds one cancel signal to a node.
const signalTimeout = 5 * time.Second

type signalOrder struct {
	id     uint64
	node   string
	client *api.NodeClient
}

// sendSignals asks nodes to stop jobs, in parallel, and returns the IDs
// whose cancel took effect: signalled, or ended CANCELLED here because the
// node could not be reached.
func (s *Server) sendSignals(ctx context.Context, orders []signalOrder, by string) []uint64 {
	var mu sync.Mutex
	var done []uint64
	var wg sync.WaitGroup
	for _, o := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, signalTimeout)
			err := o.client.Do(sctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
			cancel()
			if err == nil {
				s.log.Printf("cancel job %d by %s: signalled node %s", o.id, by, o.node)
			} else if !s.endUnreachable(o.id, o.node, err, by) {
				return
			}
			mu.Lock()
			done = append(done, o.id)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return done
}

// endUnreachable ends a running job CANCELLED after its node could not be
// signalled. It reports whether the job is now cancelled (or already ended).
func (s *Server) endUnreachable(id uint64, nodeName string, sigErr error, by string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.q.job(id)
	if j == nil || !j.state().Holds() {
		return true // ended meanwhile
	}
	if s.bgCtx.Err() != nil {
		return false // shutting down: the signal was cut short, not refused
	}
	msg := "cancelled; node " + nodeName + " could not be signalled: " + sigErr.Error()
	if err := s.q.commit(s.cancelledLocked(nil, j, msg, time.Now()), nil); err != nil {
		s.log.Printf("cancel job %d: %v", id, err)
		return false
	}
	s.log.Printf("end job %d CANCELLED by %s (node %s unreachable: %v)", id, by, nodeName, sigErr)
	s.Kick()
	return true
}

// signalRequeue asks the node to end a run being requeued; a node that
// cannot be reached has the job requeued at once.
func (s *Server) signalRequeue(o signalOrder, by string) {
	ctx, cancel := context.WithTimeout(s.bgCtx, signalTimeout)
	err := o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
	cancel()
	if err == nil {
		s.log.Printf("requeue job %d by %s: signalled node %s", o.id, by, o.node)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.q.job(o.id)
	if j == nil || !j.state().Holds() || !j.rec.RequeueRequested || s.bgCtx.Err() != nil {
		return
	}
	next, cerr := step(j.rec, lifecycle.Event{Kind: lifecycle.Requeue, Message: "node " + o.node + " could not be signalled: " + err.Error()}, time.Now())
	if cerr == nil {
		cerr = s.q.commit([]change{{j, next}}, nil)
	}
	if cerr != nil {
		s.log.Printf("requeue job %d: %v", o.id, cerr)
		return
	}
	s.log.Printf("requeue job %d by %s: node %s unreachable (%v)", o.id, by, o.node, err)
	s.Kick()
}

// enforceTimeLimits stops running jobs at a time limit lowered while they
// ran (the node enforces only the limit it was launched with).
func (s *Server) enforceTimeLimits(now time.Time) {
	s.mu.Lock()
	var orders []signalOrder
	for _, j := range s.q.runningJobs() { // not the pending queue: this holds the write lock every tick
		job := &j.rec.Job
		if !j.rec.EnforceTimeLimit || job.State != api.StateRunning || j.limitSignalled || j.cancelRequested ||
			job.StartTime == nil || now.Before(job.StartTime.Add(time.Duration(job.TimeLimit+job.SuspendedSecs)*time.Second)) ||
			!s.nodes.isUp(j.batchHost()) {
			continue
		}
		j.limitSignalled = true
		orders = append(orders, s.nodes.signalOrder(job.ID, j.batchHost()))
	}
	s.mu.Unlock()
	for _, o := range orders {
		ctx, cancel := context.WithTimeout(s.bgCtx, signalTimeout)
		err := o.client.Do(ctx, http.MethodPost, "/v1/signal", api.SignalRequest{JobID: o.id}, nil)
		cancel()
		if err == nil {
			s.log.Printf("job %d reached its lowered time limit: signalled node %s", o.id, o.node)
			continue
		}
		s.mu.Lock()
		if j := s.q.job(o.id); j != nil {
			j.limitSignalled = false // try again next time
		}
		s.mu.Unlock()
	}
}
