package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/pmi"
	"github.com/corral-hpc/corral/stepio"
)

// srunMPITypes are what --mpi takes (and --mpi=list prints): none, and
// pmi2, whose runners serve the simple PMI wire protocol, versions 1 and
// 2, to the tasks (MPICH's client speaks version 1 unless told
// otherwise).
var srunMPITypes = []string{"none", api.MPIPMI2}

// checkMPI takes an --mpi value: none, pmi2 or list. The others are
// refused with what to do instead.
func checkMPI(v string) error {
	switch {
	case v == "none" || v == "list" || v == api.MPIPMI2:
		return nil
	case strings.HasPrefix(v, "pmix"):
		// Open MPI's direct launch needs a PMIx server, which corral does
		// not have; its mpirun bootstraps through srun instead.
		return fmt.Errorf("--mpi=%s is not supported: corral serves PMI-1 and PMI-2 (--mpi=pmi2, for MPICH programs); start Open MPI programs with mpirun inside the job", v)
	}
	return fmt.Errorf("--mpi=%s: unknown MPI type (types: %s; pmi2 serves PMI-1 too)", v, strings.Join(srunMPITypes, ", "))
}

// stepMPI is the PMI the step's runners serve: --mpi (or $SLURM_MPI_TYPE),
// else the cluster's MpiDefault that came with the grant; "" for none.
func stepMPI(cfg *srunConfig, g *api.StepGrant) string {
	v := cfg.mpi
	if v == "" {
		v = g.MPIDefault
	}
	if v == api.MPIPMI2 {
		return v
	}
	return ""
}

// srunPMI is srun's part of a step with PMI: the hub that merges the
// nodes' fences and spreads an abort. It belongs to run's goroutine.
type srunPMI struct {
	fences    *pmi.Fences
	partial   map[*stepNode]map[string]string // a node's Fence frames so far
	aborted   *stepio.AbortStatus
	abortFrom *stepNode
	failed    bool
}

func newSrunPMI(mpi string, g *api.StepGrant) *srunPMI {
	if mpi == "" {
		return nil
	}
	names := make([]string, len(g.Layout))
	for i, n := range g.Layout {
		names[i] = n.Node
	}
	return &srunPMI{fences: pmi.NewFences(names), partial: map[*stepNode]map[string]string{}}
}

// pmiFrame takes a runner's PMI frame: its part of a fence, or an abort.
func (s *stepSession) pmiFrame(n *stepNode, f stepio.Frame) {
	p := s.pmi
	if p == nil {
		return
	}
	switch f.Kind {
	case stepio.Fence:
		kvs := p.partial[n]
		if kvs == nil {
			kvs = map[string]string{}
			p.partial[n] = kvs
		}
		seq, last, err := stepio.DecodeFence(f.Payload, kvs)
		if err != nil {
			s.pmiFailed(fmt.Errorf("%s: %v", n.Node, err))
			return
		}
		if !last {
			return
		}
		delete(p.partial, n)
		merged, done, err := p.fences.Add(n.Node, seq, kvs)
		if err != nil {
			s.pmiFailed(err)
			return
		}
		if done {
			s.fenceDone(seq, merged)
		}
	case stepio.Abort:
		a, err := stepio.DecodeAbort(f.Payload)
		if err != nil || p.aborted != nil {
			return
		}
		p.aborted = &a
		fmt.Fprintf(s.env.stderr, "srun: error: %s: task %d: %s\n", n.Node, a.Rank, a.Message)
		fmt.Fprintf(s.env.stderr, "srun: Job step aborted: StepId=%d.%d\n", s.jobID, s.stepID)
		p.abortFrom = n
		s.killing = true
		s.killExpiry = time.After(srunKillTimeout)
		for _, o := range s.order {
			if o.conn != nil && !o.finished {
				s.pmiConnected(o)
			}
		}
	}
}

// pmiConnected tells a node of an abort (one that connects late, too),
// unless the abort came from it.
func (s *stepSession) pmiConnected(n *stepNode) {
	p := s.pmi
	if p == nil || p.aborted == nil || n == p.abortFrom {
		return
	}
	w, a := n.w, *p.aborted
	go w.Write(stepio.AbortFrame(a)) //nolint:errcheck // a broken connection shows in its reader
}

// fenceDone answers every node with the fence's merged puts.
func (s *stepSession) fenceDone(seq int, merged map[string]string) {
	frames, err := stepio.FenceFrames(stepio.FenceDone, seq, merged)
	if err != nil {
		s.pmiFailed(err)
		return
	}
	for _, n := range s.order {
		if n.conn == nil || n.finished {
			continue
		}
		w := n.w
		go func() {
			for _, f := range frames {
				if w.Write(f) != nil {
					return // a broken connection shows in its reader
				}
			}
		}()
	}
}

// pmiNodeGone is told that a node's tasks have ended or that srun lost
// it: a fence the node had not entered can never complete.
func (s *stepSession) pmiNodeGone(n *stepNode) {
	if s.pmi == nil {
		return
	}
	if err := s.pmi.fences.Gone(n.Node); err != nil {
		s.pmiFailed(err)
	}
}

// pmiFailed ends a step whose PMI cannot go on: its tasks would wait in
// a fence forever.
func (s *stepSession) pmiFailed(err error) {
	p := s.pmi
	if p.failed || p.aborted != nil || s.killing {
		return
	}
	p.failed = true
	fmt.Fprintf(s.env.stderr, "srun: error: StepId=%d.%d: PMI: %v\n", s.jobID, s.stepID, err)
	s.terminate()
}

// pmiExitCode is srun's exit status: the abort's exit code when a task
// aborted the step with one, else code (the tasks' highest).
func (s *stepSession) pmiExitCode(code int) int {
	if s.pmi != nil && s.pmi.aborted != nil && s.pmi.aborted.Code >= 0 {
		return s.pmi.aborted.Code
	}
	return code
}
