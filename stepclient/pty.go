package stepclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// Bounds on a PTY step's life outside the caller's control; variables so
// that a test can shorten them.
var (
	// ConnectTimeout is how long the node has to connect back once it
	// accepted the launch (srun's bound too).
	ConnectTimeout = time.Minute
	// HelloTimeout is how long a connection has to present its Hello.
	HelloTimeout = 10 * time.Second
	// HangupGrace is how long Close waits, after hanging up the terminal,
	// for the task to end before it cancels the step.
	HangupGrace = 5 * time.Second
	// requestTimeout bounds each call to the controller or the node.
	requestTimeout = 30 * time.Second
)

// PTYRequest is what a PTY step runs.
type PTYRequest struct {
	JobID uint64
	Name  string // the step's name, as sacct shows it
	Argv  []string
	Env   []string
	Cwd   string // "" for the job's working directory
}

// PTY is a one-task step on a pseudo-terminal in a running job, on the
// job's first node, overlapping the job's other steps (srun --jobid N
// --overlap --pty). It is made in two parts, NewPTY (the controller's
// grant: every refusal happens there, before anything starts) and Start
// (the launch and the relay), so that a caller can answer a refusal in
// its own terms before it commits to a connection of its own.
type PTY struct {
	JobID  uint64
	StepID int
	Node   string // where the task runs

	cl    *api.Client
	grant *api.StepGrant
	req   PTYRequest

	conn net.Conn
	w    *stepio.Writer
	done chan struct{} // closed when the runner's connection has ended

	mu     sync.Mutex
	exit   *stepio.ExitStatus // task 0's end, once reported
	ended  bool               // the runner said Done
	lost   error              // the connection ended without Done
	closed sync.Once
}

// NewPTY asks the controller, as cl's user and through the API's own
// checks, for the step. Nothing runs yet; Close cancels the step.
func NewPTY(ctx context.Context, cl *api.Client, req PTYRequest) (*PTY, error) {
	if len(req.Argv) == 0 {
		return nil, errors.New("no command to run on the terminal")
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	g, err := cl.CreateStep(rctx, req.JobID, api.StepRequest{Name: req.Name, Nodes: 1, Ntasks: 1, Overlap: true})
	if err != nil {
		return nil, err
	}
	p := &PTY{JobID: req.JobID, StepID: g.Step.StepID, cl: cl, grant: g, req: req, done: make(chan struct{})}
	if len(g.Layout) == 0 {
		p.cancelStep()
		return nil, fmt.Errorf("step %d.%d was granted no node", p.JobID, p.StepID)
	}
	p.Node = g.Layout[0].Node
	return p, nil
}

// Start launches the task on its node, waits for the node to connect
// back, and relays the terminal's output to out until the task ends
// (Wait). On an error nothing runs and the step is cancelled.
func (p *PTY) Start(ctx context.Context, out io.Writer) error {
	if err := p.connect(ctx); err != nil {
		p.cancelStep()
		close(p.done)
		return err
	}
	go p.relay(out)
	return nil
}

func (p *PTY) connect(ctx context.Context) error {
	node := p.grant.Layout[0]
	ln, err := Listen(node.Addr)
	if err != nil {
		return err
	}
	defer ln.Close() // one connection is all a one-node step makes
	conns := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if name, err := ln.Hello(c, HelloTimeout); err != nil || name != node.Node {
				c.Close()
				continue
			}
			conns <- c
			return
		}
	}()
	launch := api.StepLaunch{Credential: p.grant.Credential, Argv: p.req.Argv, Env: p.req.Env, Cwd: p.req.Cwd,
		IOAddr: ln.Addr().String(), IOToken: ln.Token, Pty: true}
	if err := Launch(ctx, p.cl, node, p.grant.CAPEM, &launch); err != nil {
		return fmt.Errorf("starting the terminal's step %d.%d on node %s: %w", p.JobID, p.StepID, node.Node, err)
	}
	select {
	case c := <-conns:
		p.conn, p.w = c, stepio.NewWriter(c)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(ConnectTimeout):
		return fmt.Errorf("node %s did not connect back within %v", node.Node, ConnectTimeout)
	}
}

// relay copies the task's output to out until the runner says Done or
// the connection ends. A failing out (the viewer left) does not stop it:
// the frames are read and dropped until Close ends the task.
func (p *PTY) relay(out io.Writer) {
	defer close(p.done)
	outOK := true
	for {
		f, err := stepio.Read(p.conn)
		if err != nil {
			p.mu.Lock()
			p.lost = err
			p.mu.Unlock()
			return
		}
		switch f.Kind {
		case stepio.Stdout, stepio.Stderr:
			if outOK && f.Task == 0 {
				_, err := out.Write(f.Payload)
				outOK = err == nil
			}
		case stepio.Exit:
			if st, err := stepio.DecodeExit(f.Payload); err == nil && f.Task == 0 {
				p.mu.Lock()
				p.exit = &st
				p.mu.Unlock()
			}
		case stepio.Done:
			p.mu.Lock()
			p.ended = true
			p.mu.Unlock()
			return
		}
	}
}

// Write sends keystrokes (or pasted text) to the terminal.
func (p *PTY) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if err := p.w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 0, Payload: b}); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Resize gives the terminal a new size; the task gets SIGWINCH.
func (p *PTY) Resize(rows, cols uint16) error {
	if rows == 0 || cols == 0 {
		return fmt.Errorf("terminal size %dx%d: want at least one row and one column", rows, cols)
	}
	return p.w.Write(stepio.WinsizeFrame(0, rows, cols))
}

// Done is closed when the task has ended (or its node's connection was
// lost).
func (p *PTY) Done() <-chan struct{} { return p.done }

// Wait waits for the task's end and returns its exit status; an error
// when the connection ended before the node said the task had ended.
func (p *PTY) Wait() (stepio.ExitStatus, error) {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.exit != nil:
		return *p.exit, nil
	case p.ended:
		return stepio.ExitStatus{Code: 1}, nil // Done without an Exit: it failed to start
	case p.lost != nil:
		return stepio.ExitStatus{}, fmt.Errorf("lost the connection to node %s: %v", p.Node, p.lost)
	}
	return stepio.ExitStatus{}, errors.New("the terminal never started")
}

// Close ends the step, as closing a terminal does: the task is hung up
// (SIGHUP) and, if it has not ended within HangupGrace, the step is
// cancelled through the controller. The job goes on.
func (p *PTY) Close() {
	p.closed.Do(func() {
		if p.w != nil {
			_ = p.w.Write(stepio.Frame{Kind: stepio.Signal, Task: stepio.AllTasks, Payload: []byte{byte(syscall.SIGHUP)}}) // a dead connection shows below
			select {
			case <-p.done:
			case <-time.After(HangupGrace):
			}
		}
		p.mu.Lock()
		ended := p.ended
		p.mu.Unlock()
		if !ended {
			p.cancelStep()
		}
		if p.conn != nil {
			p.conn.Close()
		}
	})
}

// cancelStep asks the controller to end the step (its nodes kill what
// runs of it); a step that ended meanwhile is no error worth reporting.
func (p *PTY) cancelStep() {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	_, _ = p.cl.CancelStep(ctx, p.JobID, p.StepID) // ended already, or the controller is gone: nothing more to do
}
