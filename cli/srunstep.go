package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/stepclient"
	"github.com/corral-hpc/corral/stepio"
)

// Bounds on the nodes' side of a launch; variables so that a test can
// shorten them.
var (
	// srunConnectTimeout is how long a node whose launch was accepted has
	// to connect back before srun gives up on it and ends the step.
	srunConnectTimeout = time.Minute
	// srunHelloTimeout is how long a connection has to present its Hello.
	srunHelloTimeout = 10 * time.Second
	// srunKillTimeout is how long srun waits for the nodes to report
	// after it killed the step before it gives up on them.
	srunKillTimeout = time.Minute
	// srunStepPoll is how often srun asks ctld whether the step still
	// runs while a node it launched has not connected: a runner that
	// fails before it reaches srun ends its part of the step all the same.
	srunStepPoll = 2 * time.Second
)

// srunForwarded are the signals srun passes on to every task.
var srunForwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT}

// stepSession is one running step as srun sees it. Its fields belong to
// the goroutine running run; the others talk to it through events.
type stepSession struct {
	cfg    *srunConfig
	env    srunEnv
	grant  *api.StepGrant
	jobID  uint64
	stepID int
	ln     *stepclient.Listener // where the runners connect, and their token
	launch api.StepLaunch
	out    *srunOutput
	nodes  map[string]*stepNode
	order  []*stepNode
	events chan stepEvent
	quit   chan struct{}
	now    func() time.Time // a test's clock for the double Ctrl-C

	ends       map[int]stepio.ExitStatus
	oom        bool // a node reported OOM kills among its tasks: srun exits 1
	firstEnd   bool
	killing    bool
	lastInt    time.Time
	sent       []byte // signals forwarded so far, replayed to a node that connects late
	waitExpiry <-chan time.Time
	killExpiry <-chan time.Time // set once the step is being killed
	term       *localTerminal   // --pty with srun on a terminal
	rank0      *stepNode        // once connected: where input and window sizes go
	cl         *api.Client      // made on first use
	asking     bool             // a step state request is under way
	pmi        *srunPMI         // --mpi=pmi2: the fences' hub (srunpmi.go)
	bg         sync.WaitGroup   // requests to ctld that run waits for before it returns
	cancelErr  error            // cancelStep's, read after bg.Wait
}

// stepNode is one node of the step.
type stepNode struct {
	api.StepNode
	index    int
	conn     net.Conn
	w        *stepio.Writer
	exited   map[int]bool
	launched bool // the node accepted the launch
	finished bool // Done seen, connection lost, or never started
}

type stepEventKind int

const (
	evConnected stepEventKind = iota
	evRejected
	evFrame
	evClosed
	evLaunched
	evLaunchFailed
	evConnectTimeout
	evStepState // ctld's answer about the step (state, or err)
)

type stepEvent struct {
	kind  stepEventKind
	node  *stepNode
	conn  net.Conn
	frame stepio.Frame
	err   error
	state api.JobState
}

func newStepSession(cfg *srunConfig, env srunEnv, g *api.StepGrant) (*stepSession, error) {
	s := &stepSession{
		cfg: cfg, env: env, grant: g,
		jobID: g.Credential.JobID, stepID: g.Credential.StepID,
		nodes:  map[string]*stepNode{},
		events: make(chan stepEvent, 64),
		quit:   make(chan struct{}),
		now:    time.Now,
		ends:   map[int]stepio.ExitStatus{},
	}
	rankNode := map[int]*stepNode{}
	for i, n := range g.Layout {
		sn := &stepNode{StepNode: n, index: i, exited: map[int]bool{}}
		s.nodes[n.Node] = sn
		s.order = append(s.order, sn)
		for _, r := range n.Ranks {
			rankNode[r] = sn
		}
	}
	var err error
	if s.ln, err = stepclient.Listen(g.Layout[0].Addr); err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	if cfg.chdir != "" { // -D, relative to srun's own directory
		cwd = filepath.Join(cwd, cfg.chdir)
		if filepath.IsAbs(cfg.chdir) {
			cwd = filepath.Clean(cfg.chdir)
		}
	}
	s.launch = api.StepLaunch{
		Credential: g.Credential,
		Argv:       cfg.argv,
		Env:        jobspec.ExportedEnv(env.environ(), cfg.export),
		Cwd:        cwd,
		IOAddr:     s.ln.Addr().String(),
		IOToken:    s.ln.Token,
		Pty:        cfg.pty,
		MasterPort: masterPort(s.jobID, s.stepID, g.Layout[0].Node, localNodeName(env.getenv)),
		MPI:        stepMPI(cfg, g),
	}
	s.pmi = newSrunPMI(s.launch.MPI, g)
	userName := ""
	if u, err := user.Current(); err == nil {
		userName = u.Username
	}
	s.out = newSrunOutput(env.stdout, env.stderr, cfg.output, cfg.errput, cfg.label, g.Credential.Tasks, func(task int) outputFields {
		f := outputFields{task: task, job: s.jobID, step: s.stepID, user: userName, name: cfg.req.Name}
		if n := rankNode[task]; n != nil {
			f.node, f.nodeName = n.index, n.Node
		}
		return f
	})
	s.out.appendFiles = cfg.appendOutput
	s.out.failed = func(path string, err error) {
		fmt.Fprintf(env.stderr, "srun: error: cannot write %s: %v\n", path, err)
	}
	return s, nil
}

// run launches the step, relays its I/O and signals until every node has
// finished, and returns srun's exit status.
func (s *stepSession) run(ctx context.Context) int {
	defer close(s.quit)
	defer s.ln.Close()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, srunForwarded...)
	defer signal.Stop(sigs)
	var winch chan os.Signal
	if s.cfg.pty {
		if s.term = openLocalTerminal(s.env.stdin); s.term != nil && s.term.makeRaw() == nil {
			defer s.term.restore()
			s.env.stderr = crlfWriter{s.env.stderr}
			winch = make(chan os.Signal, 1)
			signal.Notify(winch, syscall.SIGWINCH)
			defer signal.Stop(winch)
		}
	}

	go s.accept()
	for _, n := range s.order {
		go s.launchOn(ctx, n)
	}
	poll := time.NewTicker(srunStepPoll)
	defer poll.Stop()
	for !s.allFinished() {
		select {
		case <-poll.C:
			s.askStepState(ctx)
		case e := <-s.events:
			s.handle(e)
		case sig := <-sigs:
			s.onSignal(sig.(syscall.Signal))
		case <-winch:
			s.sendWinsize()
		case <-s.waitExpiry:
			s.waitExpiry = nil
			fmt.Fprintf(s.env.stderr, "srun: error: First task exited %ds ago\n", int(s.cfg.wait/time.Second))
			s.terminate()
		case <-s.killExpiry:
			fmt.Fprintln(s.env.stderr, "srun: error: Timed out waiting for job step to complete")
			for _, n := range s.order {
				if !n.finished {
					s.lose(n)
				}
			}
		}
	}
	for _, n := range s.order {
		if n.conn != nil {
			n.conn.Close()
		}
	}
	ends := make([]stepio.ExitStatus, 0, len(s.ends))
	for _, st := range s.ends {
		ends = append(ends, st)
	}
	s.bg.Wait()
	if s.cancelErr != nil && s.cfg.verbose > 0 { // ended already (its other nodes reported) is no news
		fmt.Fprintf(s.env.stderr, "srun: cancelling StepId=%d.%d: %s\n", s.jobID, s.stepID, oneLine(s.cancelErr.Error()))
	}
	code := s.pmiExitCode(foldExitCodes(ends))
	if s.oom {
		code = 1 // whatever the tasks' statuses, as Slurm's srun after SIG_OOM
	}
	if err := s.out.close(); err != nil {
		fmt.Fprintf(s.env.stderr, "srun: error: %v\n", err)
		code = max(code, 1)
	}
	return code
}

func (s *stepSession) allFinished() bool {
	for _, n := range s.order {
		if !n.finished {
			return false
		}
	}
	return true
}

// send hands an event to run's loop unless run has returned.
func (s *stepSession) send(e stepEvent) {
	select {
	case s.events <- e:
	case <-s.quit:
	}
}

// launchOn launches the step on n; a node whose noded is restarting is
// tried again where ctld then has it (stepclient.Launch).
func (s *stepSession) launchOn(ctx context.Context, n *stepNode) {
	if err := stepclient.Launch(ctx, s.env.client(), n.StepNode, s.grant.CAPEM, &s.launch); err != nil {
		s.send(stepEvent{kind: evLaunchFailed, node: n, err: err})
		return
	}
	s.send(stepEvent{kind: evLaunched, node: n})
}

// accept takes the runners' connections; each proves itself with a Hello
// carrying the token before run sees it.
func (s *stepSession) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			n, err := s.hello(c)
			if err != nil {
				// Reported before the close, so that -v says it in order.
				s.send(stepEvent{kind: evRejected, err: fmt.Errorf("dropped a connection from %s: %v", c.RemoteAddr(), err)})
				c.Close()
				return
			}
			s.send(stepEvent{kind: evConnected, node: n, conn: c})
		}()
	}
}

func (s *stepSession) hello(c net.Conn) (*stepNode, error) {
	node, err := s.ln.Hello(c, srunHelloTimeout)
	if err != nil {
		return nil, err
	}
	n := s.nodes[node]
	if n == nil {
		return nil, fmt.Errorf("node %q is not in the step", node)
	}
	return n, nil
}

func (s *stepSession) read(n *stepNode, c net.Conn) {
	for {
		f, err := stepio.Read(c)
		if err != nil {
			s.send(stepEvent{kind: evClosed, node: n, err: err})
			return
		}
		s.send(stepEvent{kind: evFrame, node: n, frame: f})
	}
}

func (s *stepSession) handle(e stepEvent) {
	n := e.node
	switch e.kind {
	case evRejected:
		if s.cfg.verbose > 0 {
			fmt.Fprintf(s.env.stderr, "srun: %v\n", e.err)
		}
	case evConnected:
		if n.conn != nil || n.finished {
			e.conn.Close() // a second connection for one node
			return
		}
		n.conn, n.w = e.conn, stepio.NewWriter(e.conn)
		go s.read(n, e.conn)
		for _, sig := range s.sent {
			s.signalNode(n, sig)
		}
		s.pmiConnected(n)
		if s.hasRank(n, 0) {
			s.rank0 = n
			s.sendWinsize()
			s.forwardStdin(n)
		}
	case evStepState:
		s.asking = false
		if e.err != nil || e.state == api.StateRunning {
			return
		}
		for _, n := range s.order {
			if n.launched && n.conn == nil && !n.finished {
				fmt.Fprintf(s.env.stderr, "srun: error: StepId=%d.%d ended (%s) before node %s connected\n", s.jobID, s.stepID, e.state, n.Node)
				s.lose(n)
			}
		}
	case evLaunched:
		n.launched = true
		time.AfterFunc(srunConnectTimeout, func() { s.send(stepEvent{kind: evConnectTimeout, node: n}) })
	case evLaunchFailed:
		if n.conn != nil || n.finished {
			return // it connected anyway: its tasks run
		}
		fmt.Fprintf(s.env.stderr, "srun: error: Task launch for StepId=%d.%d failed on node %s: %s\n", s.jobID, s.stepID, n.Node, oneLine(e.err.Error()))
		s.lose(n)
		s.terminate()
		s.cancelStep()
	case evConnectTimeout:
		if n.conn != nil || n.finished {
			return
		}
		fmt.Fprintf(s.env.stderr, "srun: error: node %s did not connect back within %v\n", n.Node, srunConnectTimeout)
		s.lose(n)
		s.terminate()
	case evClosed:
		if n.finished {
			return
		}
		fmt.Fprintf(s.env.stderr, "srun: error: %s: lost the connection to the step's tasks: %v\n", n.Node, e.err)
		s.lose(n)
	case evFrame:
		s.frame(n, e.frame)
	}
}

func (s *stepSession) frame(n *stepNode, f stepio.Frame) {
	task := int(f.Task)
	switch f.Kind {
	case stepio.Stdout, stepio.Stderr:
		if s.hasRank(n, task) {
			s.out.write(f.Kind, task, f.Payload)
		}
	case stepio.Exit:
		st, err := stepio.DecodeExit(f.Payload)
		if err != nil || !s.hasRank(n, task) || n.exited[task] {
			return
		}
		n.exited[task] = true
		s.out.flush(task)
		s.ends[task] = st
		if text := describeTaskEnd(st); text != "" {
			fmt.Fprintf(s.env.stderr, "srun: error: %s: task %d: %s\n", n.Node, task, text)
		}
		if s.cfg.killOnBadExit && taskExitCode(st) != 0 && !s.killing {
			s.terminate()
		}
		if !s.firstEnd {
			s.firstEnd = true
			if s.cfg.wait > 0 {
				s.waitExpiry = time.After(s.cfg.wait)
			}
		}
	case stepio.Done:
		for _, r := range n.Ranks {
			if !n.exited[r] {
				s.ends[r] = stepio.ExitStatus{Code: 1}
			}
		}
		n.finished = true
		if kills, err := stepio.DecodeDone(f.Payload); err == nil && kills > 0 && !s.oom {
			// Slurm's srun, told SIG_OOM for a node's tasks, says so once.
			s.oom = true
			fmt.Fprintf(s.env.stderr, "srun: error: %s: %s: Out Of Memory\n", n.Node, taskWords(n.Ranks))
		}
		s.pmiNodeGone(n)
	case stepio.Fence, stepio.Abort:
		s.pmiFrame(n, f)
	}
}

// askStepState asks ctld, in the background, how the step stands, while
// a node that accepted its launch has not connected.
func (s *stepSession) askStepState(ctx context.Context) {
	waiting := false
	for _, n := range s.order {
		waiting = waiting || n.launched && n.conn == nil && !n.finished
	}
	if !waiting || s.asking {
		return
	}
	s.asking = true
	if s.cl == nil {
		s.cl = s.env.client()
	}
	go func() {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		steps, err := s.cl.Steps(rctx, s.jobID)
		e := stepEvent{kind: evStepState, err: err}
		if err == nil {
			e.err = fmt.Errorf("step %d.%d is not listed", s.jobID, s.stepID)
			for _, st := range steps {
				if st.StepID == s.stepID {
					e.state, e.err = st.State, nil
				}
			}
		}
		s.send(e)
	}()
}

// cancelStep asks ctld, in the background, to end the step once a
// node's launch failed: that node will never report its part, so the
// step would stay RUNNING until ctld's sweep. ctld asks the step's
// nodes, and records as over the parts that never started.
func (s *stepSession) cancelStep() {
	cl := s.env.client()
	s.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		_, s.cancelErr = cl.CancelStep(ctx, s.jobID, s.stepID)
	})
}

// lose ends a node whose tasks srun will hear no more of: those that had
// not reported count as failed.
func (s *stepSession) lose(n *stepNode) {
	for _, r := range n.Ranks {
		if !n.exited[r] {
			n.exited[r] = true
			s.out.flush(r)
			s.ends[r] = stepio.ExitStatus{Code: 1}
		}
	}
	n.finished = true
	if n.conn != nil {
		n.conn.Close()
	}
	s.pmiNodeGone(n)
}

func (s *stepSession) hasRank(n *stepNode, rank int) bool {
	for _, r := range n.Ranks {
		if r == rank {
			return true
		}
	}
	return false
}

// onSignal forwards sig. Ctrl-C is Slurm's: the first one is passed on
// with a notice, a second within a second kills the step.
func (s *stepSession) onSignal(sig syscall.Signal) {
	if sig == syscall.SIGINT {
		now := s.now()
		if !s.lastInt.IsZero() && now.Sub(s.lastInt) <= time.Second {
			fmt.Fprintln(s.env.stderr, "srun: forcing job termination")
			s.terminate()
			return
		}
		s.lastInt = now
		fmt.Fprintln(s.env.stderr, "srun: interrupt (one more within 1 sec to abort)")
	}
	s.forward(byte(sig))
}

// terminate kills every task of the step (-K, --wait, a second Ctrl-C, a
// node that failed to start).
func (s *stepSession) terminate() {
	if s.killing {
		return
	}
	s.killing = true
	s.killExpiry = time.After(srunKillTimeout)
	fmt.Fprintf(s.env.stderr, "srun: Terminating StepId=%d.%d\n", s.jobID, s.stepID)
	s.forward(byte(syscall.SIGKILL))
}

func (s *stepSession) forward(sig byte) {
	s.sent = append(s.sent, sig)
	for _, n := range s.order {
		if n.conn != nil && !n.finished {
			s.signalNode(n, sig)
		}
	}
}

// signalNode sends without blocking run's loop on a node that does not
// read.
func (s *stepSession) signalNode(n *stepNode, sig byte) {
	w := n.w
	go w.Write(stepio.Frame{Kind: stepio.Signal, Task: stepio.AllTasks, Payload: []byte{sig}}) //nolint:errcheck // a broken connection shows in its reader
}

// sendWinsize gives task 0's terminal the size of srun's (--pty).
func (s *stepSession) sendWinsize() {
	if s.term == nil || s.rank0 == nil || s.rank0.finished {
		return
	}
	if rows, cols, ok := s.term.size(); ok {
		w := s.rank0.w
		go w.Write(stepio.WinsizeFrame(0, rows, cols)) //nolint:errcheck // as in signalNode
	}
}

// forwardStdin sends srun's standard input to task 0 on n, then the
// end-of-input frame.
func (s *stepSession) forwardStdin(n *stepNode) {
	w := n.w
	eof := stepio.Frame{Kind: stepio.Stdin, Task: 0}
	if s.cfg.input == "none" || s.env.stdin == nil {
		go w.Write(eof) //nolint:errcheck // as in signalNode
		return
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			k, err := s.env.stdin.Read(buf)
			if k > 0 {
				if w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 0, Payload: buf[:k]}) != nil {
					return
				}
			}
			if err != nil {
				w.Write(eof) //nolint:errcheck // the task may be gone already
				return
			}
		}
	}()
}
