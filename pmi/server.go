package pmi

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Limits the server announces (cmd=maxes) and enforces. MPICH splits a
// longer value over several keys itself.
const (
	KVSNameMax = 256
	KeyLenMax  = 64
	ValLenMax  = 1024
	// MaxStoreBytes bounds a step's key-value store (keys and values):
	// the server runs with privileges its tasks do not have, so a task
	// must not make it hold unbounded memory. MPICH puts a few hundred
	// bytes per rank.
	MaxStoreBytes = 32 << 20
)

// Job is what every rank of the step is told.
type Job struct {
	ID      string // PMI_JOBID and the KVS name: "<job>.<step>"
	Size    int    // the step's task count
	Mapping string // PMI_process_mapping (ProcessMapping)
}

// Server is one node's PMI server for one step: it answers the local
// ranks' commands, keeps the step's key-value store as the fences
// deliver it, and runs the node's part of each fence.
type Server struct {
	job   Job
	local int // how many ranks run on this node

	// Fence is called, from the goroutine of the last local rank to
	// enter fence seq, with the node's puts since the previous fence;
	// the runner passes them to srun, whose answer comes back through
	// FenceDone. An error fails the fence: the waiting ranks' connections
	// are closed, so their PMI calls fail instead of hanging.
	Fence func(seq int, puts map[string]string) error
	// Abort is called when a rank asks to abort the step (MPI_Abort).
	Abort func(rank, code int, msg string)

	mu          sync.Mutex
	store       map[string]string // the step's keys, as of the last fence
	pending     map[string]string // the node's puts since the last fence
	storeSize   int               // bytes of keys and values in store
	pendingSize int               // and in pending
	seq         int               // the fence under way (or next)
	entered     int               // local ranks in fence seq
	release     chan struct{}     // closed when fence seq is done
	failed      error             // set when a fence failed: every later one fails too
	nodeAttrs   map[string]string // PMI-2 info-putnodeattr
}

// NewServer is the server of a node running local of job's ranks.
func NewServer(job Job, local int) *Server {
	return &Server{
		job: job, local: local,
		store:   map[string]string{},
		pending: map[string]string{},
		release: make(chan struct{}),
	}
}

// ErrFenceFailed is a fence that cannot complete: a node is gone, or
// srun is.
var ErrFenceFailed = errors.New("pmi: the fence failed")

// FenceDone delivers fence seq's merged puts (every node's) and lets the
// ranks waiting in it go on. An answer for another fence is an error.
func (s *Server) FenceDone(seq int, kvs map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != s.seq || s.entered != s.local {
		return fmt.Errorf("pmi: an answer for fence %d while fence %d has %d of %d ranks", seq, s.seq, s.entered, s.local)
	}
	for k, v := range kvs {
		if old, ok := s.store[k]; ok {
			s.storeSize -= len(k) + len(old)
		}
		s.store[k] = v
		s.storeSize += len(k) + len(v)
	}
	if s.storeSize > MaxStoreBytes {
		return fmt.Errorf("pmi: fence %d brought the store to %d bytes, more than %d", seq, s.storeSize, MaxStoreBytes)
	}
	s.seq++
	s.entered = 0
	close(s.release)
	s.release = make(chan struct{})
	return nil
}

// Fail fails the fence under way and every later one (srun or a node is
// gone); waiting ranks' connections are closed.
func (s *Server) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = fmt.Errorf("%w: %v", ErrFenceFailed, err)
		close(s.release)
	}
}

// enterFence blocks rank's caller until the fence it entered is done; a
// nil error means the ranks may go on.
func (s *Server) enterFence() error {
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return s.failed
	}
	release := s.release
	s.entered++
	var puts map[string]string
	seq := s.seq
	if s.entered == s.local {
		puts = s.pending
		s.pending, s.pendingSize = map[string]string{}, 0
	}
	s.mu.Unlock()
	if puts != nil {
		if err := s.Fence(seq, puts); err != nil {
			s.Fail(err)
		}
	}
	<-release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *Server) put(key, value string) error {
	switch {
	case key == "" || len(key) > KeyLenMax:
		return fmt.Errorf("key of %d bytes (1 to %d)", len(key), KeyLenMax)
	case len(value) > ValLenMax:
		return fmt.Errorf("value of %d bytes (at most %d)", len(value), ValLenMax)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.storeSize+s.pendingSize+len(key)+len(value) > MaxStoreBytes {
		return fmt.Errorf("the step's key-value store is full (%d bytes)", MaxStoreBytes)
	}
	s.pendingSize += len(key) + len(value)
	s.pending[key] = value
	return nil
}

// get looks a key up: the step's store, then the node's own puts not yet
// fenced, then the job's attributes.
func (s *Server) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.store[key]; ok {
		return v, true
	}
	if v, ok := s.pending[key]; ok {
		return v, true
	}
	if key == "PMI_process_mapping" && s.job.Mapping != "" {
		return s.job.Mapping, true
	}
	return "", false
}

// conn is one rank's connection as Serve speaks on it.
type conn struct {
	s         *Server
	rank      int
	rd        *reader
	w         io.Writer
	version   int // 0 until init, then 1 or 2
	finalized bool
}

// ErrNoFinalize is Serve's answer for a rank that initialized PMI and
// then closed its connection without finalizing: it died (or exited
// without MPI_Finalize), so the step cannot go on.
var ErrNoFinalize = errors.New("pmi: the rank closed its connection without finalize")

// Serve answers rank's commands on rw until the rank finalizes or closes
// it. It returns nil for a rank that finalized, or never spoke (a program
// that is not an MPI one), ErrNoFinalize for one that went away after
// init, and the first protocol or I/O error otherwise; an unknown command
// is answered with rc=-1 and does not end the connection.
func (s *Server) Serve(rw io.ReadWriter, rank int) error {
	c := &conn{s: s, rank: rank, rd: newReader(rw), w: rw}
	for {
		var m Message
		var err error
		if c.version == 2 {
			var body string
			if body, err = c.rd.messageV2(); err == nil {
				m, err = ParseV2(body)
			}
		} else {
			var line string
			if line, err = c.rd.lineV1(); err == nil {
				m, err = ParseV1(line)
			}
		}
		if err == io.EOF {
			if c.version != 0 && !c.finalized {
				return ErrNoFinalize
			}
			return nil
		}
		if err != nil {
			return err
		}
		done, err := c.handle(m)
		if err != nil || done {
			return err
		}
	}
}

func (c *conn) send(m Message) error {
	var out string
	if c.version == 2 {
		out = FormatV2(m)
	} else {
		out = FormatV1(m)
	}
	_, err := io.WriteString(c.w, out)
	return err
}

// handle answers one command; done is true once the rank finalized.
func (c *conn) handle(m Message) (done bool, err error) {
	if c.version == 0 && m.Cmd != "init" {
		return false, fmt.Errorf("%w: %s before init", ErrSyntax, m.Cmd)
	}
	if c.version == 2 {
		return c.handleV2(m)
	}
	return c.handleV1(m)
}

func rc(code int, more ...KV) []KV {
	return append([]KV{{"rc", strconv.Itoa(code)}}, more...)
}

// init negotiates the version: 1.1 and 2.0 are served; anything else is
// answered rc=-1 with the version offered (1.1) and ends the connection.
func (c *conn) init(m Message) error {
	v, _ := m.Get("pmi_version")
	sub, _ := m.Get("pmi_subversion")
	c.version = 1 // the answer is a PMI-1 line whatever was asked
	code, next := 0, 1
	switch {
	case v == "1" && sub == "1":
	case v == "2" && sub == "0":
		next = 2
	default:
		code = -1
	}
	ans := []KV{{"pmi_version", v}, {"pmi_subversion", sub}, {"rc", strconv.Itoa(code)}}
	if code != 0 {
		ans[0].Value, ans[1].Value = "1", "1"
	}
	if err := c.send(Message{Cmd: "response_to_init", Args: ans}); err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("pmi: rank %d asked for PMI version %s.%s (1.1 and 2.0 are served)", c.rank, v, sub)
	}
	c.version = next
	return nil
}

// Job is what the server tells the ranks.
func (s *Server) Job() Job { return s.job }
