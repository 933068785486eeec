package shim

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/pmi"
	"github.com/corral-hpc/corral/stepio"
	"golang.org/x/sys/unix"
)

// pmiFD is the task's end of its PMI socket: the first fd after stdio.
const pmiFD = 3

// stepPMI is the PMI server of an `srun --mpi=pmi2` step on this node
// (package pmi): one socket pair per local rank, the task's end its fd 3
// (PMI_FD), the runner's served by the node's pmi.Server. Fences go to
// srun over the relay and come back from it; an abort, from a rank here
// or from srun, kills the node's tasks and sets the step's exit code.
// Its methods do nothing on a nil *stepPMI (a step without PMI).
type stepPMI struct {
	srv   *pmi.Server
	rl    *relay
	ours  map[int]*os.File // by rank: the runner's end
	their map[int]*os.File // by rank: the task's end, closed once the tasks run
	kill  func()           // kills every task of the node

	mu        sync.Mutex
	aborted   *stepio.AbortStatus // the first abort, from here or from srun
	doneIn    map[string]string   // FenceDone frames being gathered
	doneBytes int                 // and their size
}

// newStepPMI makes the node's PMI server and its sockets, or returns nil
// for a step without PMI.
func newStepPMI(s *StepJob, rl *relay) (*stepPMI, error) {
	if s.Launch.MPI != api.MPIPMI2 {
		return nil, nil
	}
	c := &s.Launch.Credential
	nodeOf := make([]int, c.Tasks)
	for i, n := range c.Layout {
		for _, r := range n.Ranks {
			if r >= 0 && r < c.Tasks {
				nodeOf[r] = i
			}
		}
	}
	job := pmi.Job{ID: fmt.Sprintf("%d.%d", c.JobID, c.StepID), Size: c.Tasks, Mapping: pmi.ProcessMapping(nodeOf)}
	p := &stepPMI{
		srv: pmi.NewServer(job, len(s.Ranks)), rl: rl,
		ours: map[int]*os.File{}, their: map[int]*os.File{},
		doneIn: map[string]string{},
	}
	p.srv.Fence = p.fence
	p.srv.Abort = func(rank, code int, msg string) {
		if msg == "" {
			msg = fmt.Sprintf("task %d called MPI_Abort with exit code %d", rank, code)
		}
		p.abort(stepio.AbortStatus{Rank: rank, Code: code, Message: msg}, true)
	}
	for _, rank := range s.Ranks {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("PMI socket of task %d: %w", rank, err)
		}
		p.ours[rank] = os.NewFile(uintptr(fds[0]), "pmi-"+strconv.Itoa(rank))
		p.their[rank] = os.NewFile(uintptr(fds[1]), "pmi-task-"+strconv.Itoa(rank))
	}
	return p, nil
}

// env is the PMI variables of rank, as MPICH's simple PMI client reads
// them.
func (p *stepPMI) env(rank int) [][2]string {
	if p == nil {
		return nil
	}
	job := p.srv.Job()
	return [][2]string{
		{"PMI_FD", strconv.Itoa(pmiFD)},
		{"PMI_RANK", strconv.Itoa(rank)},
		{"PMI_SIZE", strconv.Itoa(job.Size)},
		{"PMI_JOBID", job.ID},
		{"PMI_SPAWNED", "0"},
	}
}

// files is what rank's task gets after stdio: its PMI socket as fd 3.
func (p *stepPMI) files(rank int) []*os.File {
	if p == nil {
		return nil
	}
	return []*os.File{p.their[rank]}
}

// serve closes the tasks' ends (theirs now) and answers each rank until
// it finalizes or goes away; kill stops every task of the node.
func (p *stepPMI) serve(tasks []*task, kill func()) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.kill = kill
	p.mu.Unlock()
	for _, f := range p.their {
		f.Close()
	}
	for _, t := range tasks {
		f := p.ours[t.rank]
		go func() {
			defer f.Close()
			err := p.srv.Serve(f, t.rank)
			switch {
			case errors.Is(err, pmi.ErrNoFinalize):
				// Its peers would wait for it forever: end the step, as
				// a PMI process manager does.
				p.abort(stepio.AbortStatus{Rank: t.rank, Code: -1, Message: fmt.Sprintf("task %d ended without MPI_Finalize", t.rank)}, true)
			case err != nil:
				log.Printf("task %d PMI: %v", t.rank, err)
			}
		}()
	}
}

// close closes every socket (a step whose tasks did not start).
func (p *stepPMI) close() {
	if p == nil {
		return
	}
	for _, fs := range []map[int]*os.File{p.ours, p.their} {
		for _, f := range fs {
			f.Close()
		}
	}
}

// fence sends the node's puts to srun; srun's answer comes back through
// frame.
func (p *stepPMI) fence(seq int, puts map[string]string) error {
	frames, err := stepio.FenceFrames(stepio.Fence, seq, puts)
	if err != nil {
		return err
	}
	for _, f := range frames {
		p.rl.send(f)
	}
	if !p.rl.up() {
		return errors.New("srun cannot be reached")
	}
	return nil
}

// frame takes srun's PMI frames: a fence's merged puts, an abort.
func (p *stepPMI) frame(f stepio.Frame) {
	if p == nil {
		return
	}
	switch f.Kind {
	case stepio.FenceDone:
		p.mu.Lock()
		seq, last, err := stepio.DecodeFence(f.Payload, p.doneIn)
		kvs := p.doneIn
		if p.doneBytes += len(f.Payload); err == nil && p.doneBytes > pmi.MaxStoreBytes {
			// srun runs as the job's user; the runner does not.
			err = fmt.Errorf("fence %d's answer exceeds %d bytes", seq, pmi.MaxStoreBytes)
		}
		if last || err != nil {
			p.doneIn, p.doneBytes = map[string]string{}, 0
		}
		p.mu.Unlock()
		if err == nil && last {
			err = p.srv.FenceDone(seq, kvs)
		}
		if err != nil {
			log.Printf("srun's fence answer: %v", err)
			p.srv.Fail(err)
		}
	case stepio.Abort:
		if a, err := stepio.DecodeAbort(f.Payload); err == nil {
			p.abort(a, false)
		}
	}
}

// srunGone fails the fences: no answer can come.
func (p *stepPMI) srunGone(err error) {
	if p != nil {
		p.srv.Fail(fmt.Errorf("lost srun: %v", err))
	}
}

// abort ends the node's part of the step: the first abort is kept, told
// to srun when it started here (srun tells the other nodes), and every
// task of the node is killed.
func (p *stepPMI) abort(a stepio.AbortStatus, here bool) {
	p.mu.Lock()
	first := p.aborted == nil
	if first {
		p.aborted = &a
	}
	kill := p.kill
	p.mu.Unlock()
	if !first {
		return
	}
	log.Printf("aborting the step: %s", a.Message)
	if here {
		p.rl.send(stepio.AbortFrame(a))
	}
	p.srv.Fail(errors.New("the step is aborting"))
	if kill != nil {
		kill()
	}
}

// settle gives res the abort's exit code (when the abort named one) and
// message: the step ends as its abort said, not with the kills' signal.
func (p *stepPMI) settle(res *StepResult) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.aborted == nil {
		return
	}
	if p.aborted.Code >= 0 {
		res.ExitCode, res.Signal = p.aborted.Code, 0
	}
	res.Message = p.aborted.Message
}

// killTasks is stepPMI's kill for tasks: SIGKILL to each task's tree.
func killTasks(tasks []*task) func() {
	return func() {
		for _, t := range tasks {
			t.signal(syscall.SIGKILL)
		}
	}
}
