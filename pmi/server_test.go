package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

// client is a scripted rank on one end of a pipe, the server on the
// other.
type client struct {
	t    *testing.T
	c    net.Conn
	r    *bufio.Reader
	done chan error // Serve's return
}

func dial(t *testing.T, s *Server, rank int) *client {
	a, b := net.Pipe()
	cl := &client{t: t, c: a, r: bufio.NewReader(a), done: make(chan error, 1)}
	go func() { cl.done <- s.Serve(b, rank); b.Close() }()
	t.Cleanup(func() { a.Close() })
	return cl
}

// v1 sends a PMI-1 line and returns the answer line.
func (cl *client) v1(line string) string {
	cl.t.Helper()
	if _, err := cl.c.Write([]byte(line + "\n")); err != nil {
		cl.t.Fatalf("send %q: %v", line, err)
	}
	ans, err := cl.r.ReadString('\n')
	if err != nil {
		cl.t.Fatalf("answer to %q: %v", line, err)
	}
	return strings.TrimSuffix(ans, "\n")
}

// v2 sends a PMI-2 message and returns the answer's body.
func (cl *client) v2(body string) string {
	cl.t.Helper()
	if _, err := fmt.Fprintf(cl.c, "%-6d%s", len(body), body); err != nil {
		cl.t.Fatalf("send %q: %v", body, err)
	}
	var n int
	h := make([]byte, 6)
	if _, err := ioReadFull(cl.r, h); err != nil {
		cl.t.Fatalf("answer to %q: %v", body, err)
	}
	fmt.Sscanf(strings.TrimSpace(string(h)), "%d", &n)
	b := make([]byte, n)
	if _, err := ioReadFull(cl.r, b); err != nil {
		cl.t.Fatalf("answer to %q: %v", body, err)
	}
	return string(b)
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	for i := range b {
		c, err := r.ReadByte()
		if err != nil {
			return i, err
		}
		b[i] = c
	}
	return len(b), nil
}

// step is a step of nodes × perNode ranks placed in blocks, its nodes'
// servers joined by a Fences hub as srun joins them.
type step struct {
	servers []*Server
	mu      sync.Mutex
	hub     *Fences
	aborts  []string
}

func newStep(nodes, perNode int) *step {
	st := &step{}
	var names []string
	nodeOf := make([]int, 0, nodes*perNode)
	for n := range nodes {
		names = append(names, fmt.Sprint("n", n))
		for range perNode {
			nodeOf = append(nodeOf, n)
		}
	}
	st.hub = NewFences(names)
	job := Job{ID: "7.0", Size: nodes * perNode, Mapping: ProcessMapping(nodeOf)}
	for n := range nodes {
		s := NewServer(job, perNode)
		s.Fence = func(seq int, puts map[string]string) error {
			st.mu.Lock()
			defer st.mu.Unlock()
			merged, done, err := st.hub.Add(names[n], seq, puts)
			if err != nil || !done {
				return err
			}
			for _, other := range st.servers {
				if err := other.FenceDone(seq, merged); err != nil {
					return err
				}
			}
			return nil
		}
		s.Abort = func(rank, code int, msg string) {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.aborts = append(st.aborts, fmt.Sprintf("%d %d %s", rank, code, msg))
		}
		st.servers = append(st.servers, s)
	}
	return st
}

// runRanks plays every rank of st at once, rank r on node r/perNode:
// script gives the rank's exchanges (what it says, the answer it wants),
// say sends one and returns the answer; each rank must then have
// finalized cleanly.
func runRanks(t *testing.T, st *step, perNode int, say func(*client, string) string, script func(rank int) [][2]string) {
	var wg sync.WaitGroup
	for rank := range len(st.servers) * perNode {
		cl := dial(t, st.servers[rank/perNode], rank)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, x := range script(rank) {
				if got := say(cl, x[0]); got != x[1] {
					t.Errorf("rank %d: %q answered %q, want %q", rank, x[0], got, x[1])
				}
			}
			if err := <-cl.done; err != nil {
				t.Errorf("rank %d: Serve: %v", rank, err)
			}
		}()
	}
	wg.Wait()
}

// TestPMI1Step runs what MPICH's PMI-1 client does in MPI_Init and
// MPI_Finalize, on 2 nodes of 2 ranks: every rank sees every other's
// put after the barrier, and the job's attributes.
func TestPMI1Step(t *testing.T) {
	runRanks(t, newStep(2, 2), 2, (*client).v1, func(rank int) [][2]string {
		return [][2]string{
			{"cmd=init pmi_version=1 pmi_subversion=1", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"},
			{"cmd=get_maxes", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024"},
			{"cmd=get_appnum", "cmd=appnum rc=0 appnum=0"},
			{"cmd=get_my_kvsname", "cmd=my_kvsname rc=0 kvsname=7.0"},
			{"cmd=get_universe_size", "cmd=universe_size rc=0 size=4"},
			{"cmd=get kvsname=7.0 key=PMI_process_mapping", "cmd=get_result rc=0 value=(vector,(0,2,2))"},
			{fmt.Sprintf("cmd=put kvsname=7.0 key=bc-%d value=addr%d", rank, rank), "cmd=put_result rc=0"},
			{"cmd=put kvsname=7.0 key=" + strings.Repeat("k", 65) + " value=v", "cmd=put_result rc=-1 msg=key_of_65_bytes_(1_to_64)"},
			{"cmd=barrier_in", "cmd=barrier_out"},
			{fmt.Sprintf("cmd=get kvsname=7.0 key=bc-%d", 3-rank), fmt.Sprintf("cmd=get_result rc=0 value=addr%d", 3-rank)},
			{"cmd=get kvsname=7.0 key=nope", "cmd=get_result rc=-1 msg=key_nope_not_found"},
			{"cmd=frobnicate", "cmd=frobnicate_result rc=-1 msg=unknown_command_frobnicate"},
			{"cmd=barrier_in", "cmd=barrier_out"},
			{"cmd=finalize", "cmd=finalize_ack"},
		}
	})
}

// TestPMI2Step is the same with PMI-2's commands, after a PMI-1 init
// that asks for version 2.
func TestPMI2Step(t *testing.T) {
	say := func(cl *client, msg string) string {
		if strings.HasPrefix(msg, "cmd=init ") {
			return cl.v1(msg)
		}
		return cl.v2(msg)
	}
	runRanks(t, newStep(2, 1), 1, say, func(rank int) [][2]string {
		return [][2]string{
			{"cmd=init pmi_version=2 pmi_subversion=0", "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0"},
			{fmt.Sprintf("cmd=fullinit;pmirank=%d;threaded=FALSE;", rank), fmt.Sprintf("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;", rank)},
			{"cmd=job-getid;", "cmd=job-getid-response;rc=0;jobid=7.0;"},
			{"cmd=info-getjobattr;key=PMI_process_mapping;", "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,1));"},
			{"cmd=info-putnodeattr;key=shm;value=x;", "cmd=info-putnodeattr-response;rc=0;"},
			{"cmd=info-getnodeattr;key=shm;wait=FALSE;", "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=x;"},
			{fmt.Sprintf("cmd=kvs-put;key=bc-%d;value=a;;%d;", rank, rank), "cmd=kvs-put-response;rc=0;"},
			{"cmd=kvs-fence;thrid=9;", "cmd=kvs-fence-response;rc=0;thrid=9;"},
			{fmt.Sprintf("cmd=kvs-get;jobid=7.0;srcid=-1;key=bc-%d;", 1-rank), fmt.Sprintf("cmd=kvs-get-response;rc=0;found=TRUE;value=a;;%d;", 1-rank)},
			{"cmd=kvs-get;jobid=7.0;srcid=-1;key=nope;", "cmd=kvs-get-response;rc=0;found=FALSE;"},
			{"cmd=finalize;", "cmd=finalize-response;rc=0;"},
		}
	})
}

func TestPMIAbort(t *testing.T) {
	st := newStep(1, 1)
	cl := dial(t, st.servers[0], 0)
	cl.v1("cmd=init pmi_version=1 pmi_subversion=1")
	cl.c.Write([]byte("cmd=abort exitcode=3 error_msg=application called MPI_Abort(MPI_COMM_WORLD, 3)\n"))
	if err := <-cl.done; err != nil {
		t.Fatalf("Serve after abort: %v", err)
	}
	if len(st.aborts) != 1 || st.aborts[0] != "0 3 application called MPI_Abort(MPI_COMM_WORLD, 3)" {
		t.Fatalf("aborts %q", st.aborts)
	}
}

// TestPMIRankGoesAway: a rank that closes its connection after init and
// before finalize is reported; one that never spoke PMI is not.
func TestPMIRankGoesAway(t *testing.T) {
	st := newStep(1, 2)
	a := dial(t, st.servers[0], 0)
	a.v1("cmd=init pmi_version=1 pmi_subversion=1")
	a.c.Close()
	if err := <-a.done; !errors.Is(err, ErrNoFinalize) {
		t.Errorf("Serve after a close past init: %v, want ErrNoFinalize", err)
	}
	b := dial(t, st.servers[0], 1)
	b.c.Close()
	if err := <-b.done; err != nil {
		t.Errorf("Serve of a rank that never spoke: %v", err)
	}
}

func TestPMIBadInput(t *testing.T) {
	st := newStep(1, 1)
	cl := dial(t, st.servers[0], 0)
	if got := cl.v1("cmd=init pmi_version=3 pmi_subversion=0"); got != "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1" {
		t.Errorf("init 3.0 answered %q", got)
	}
	if err := <-cl.done; err == nil {
		t.Error("Serve went on after a version it does not serve")
	}
	cl = dial(t, st.servers[0], 0)
	cl.c.Write([]byte("cmd=get_maxes\n"))
	if err := <-cl.done; !errors.Is(err, ErrSyntax) {
		t.Errorf("a command before init: %v, want ErrSyntax", err)
	}
	cl = dial(t, st.servers[0], 0)
	go cl.c.Write([]byte("cmd=init " + strings.Repeat("x", 2*MaxLine)))
	if err := <-cl.done; !errors.Is(err, ErrSyntax) {
		t.Errorf("an endless line: %v, want ErrSyntax", err)
	}
}

// TestPMIFenceFails: when the fence cannot complete (srun or a node is
// gone), the ranks waiting in it get their connection closed instead of
// waiting forever, and a later fence fails at once.
func TestPMIFenceFails(t *testing.T) {
	s := NewServer(Job{ID: "7.0", Size: 2}, 1)
	s.Fence = func(int, map[string]string) error { return errors.New("srun is gone") }
	cl := dial(t, s, 0)
	cl.v1("cmd=init pmi_version=1 pmi_subversion=1")
	cl.c.Write([]byte("cmd=barrier_in\n"))
	if err := <-cl.done; !errors.Is(err, ErrFenceFailed) {
		t.Errorf("Serve: %v, want ErrFenceFailed", err)
	}
	if _, err := cl.r.ReadString('\n'); err == nil {
		t.Error("the rank got an answer to a fence that failed")
	}
}

// TestPMIStoreBound: puts stop being taken once the step's store would
// exceed MaxStoreBytes, and a fence's answer that exceeds it fails.
func TestPMIStoreBound(t *testing.T) {
	s := NewServer(Job{ID: "7.0", Size: 1}, 1)
	v := strings.Repeat("v", ValLenMax)
	n := 0
	for ; n < MaxStoreBytes; n++ {
		if err := s.put(fmt.Sprint("k", n), v); err != nil {
			break
		}
	}
	if n == 0 || n*ValLenMax > MaxStoreBytes {
		t.Errorf("%d puts of %d bytes taken, bound %d", n, ValLenMax, MaxStoreBytes)
	}
	s = NewServer(Job{ID: "7.0", Size: 1}, 1)
	s.entered = 1
	big := map[string]string{}
	for i := range MaxStoreBytes/ValLenMax + 1 {
		big[fmt.Sprint("k", i)] = v
	}
	if err := s.FenceDone(0, big); err == nil {
		t.Error("a fence answer larger than the bound was taken")
	}
}
