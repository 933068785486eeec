package shim

import (
	"errors"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/stepio"
)

// relay is the runner's connection to srun (package stepio). Losing it
// does not stop the tasks: their output is then dropped, and their input
// ends.
type relay struct {
	conn   net.Conn // nil when srun could not be reached
	w      *stepio.Writer
	broken atomic.Bool
	pmi    *stepPMI // the step's PMI server (steppmi.go), nil without one
}

// dialTimeout bounds the connection to srun, which listens before it
// sends any launch.
const dialTimeout = 10 * time.Second

// outputGrace is how long a task's output may stay open after the task
// ended (a background process holding it) before the runner stops
// reading it, so that the task's end is reported.
const outputGrace = 2 * time.Second

// dialSrun connects to srun and says hello. A failure is logged and
// leaves a relay that drops everything.
func dialSrun(s *StepJob) *relay {
	r := &relay{}
	conn, err := net.DialTimeout("tcp", s.Launch.IOAddr, dialTimeout)
	if err != nil {
		log.Printf("connecting to srun at %s: %v (the tasks' output is dropped)", s.Launch.IOAddr, err)
		return r
	}
	r.conn, r.w = conn, stepio.NewWriter(conn)
	r.send(stepio.HelloFrame(s.Launch.IOToken, s.Node))
	return r
}

// send writes f to srun unless the connection is gone; the first failure
// marks it gone and closes it, so that nothing waits on a dead peer.
func (r *relay) send(f stepio.Frame) {
	if r.conn == nil || r.broken.Load() {
		return
	}
	if err := r.w.Write(f); err != nil {
		r.lost(err)
	}
}

// up says whether srun is still connected.
func (r *relay) up() bool { return r.conn != nil && !r.broken.Load() }

func (r *relay) lost(err error) {
	if r.broken.Swap(true) {
		return
	}
	if !errors.Is(err, net.ErrClosed) {
		log.Printf("lost srun's connection: %v (the tasks go on; their output is dropped)", err)
	}
	_ = r.conn.Close()
}

// close ends the connection after Done.
func (r *relay) close() {
	if r.conn != nil {
		r.broken.Store(true)
		_ = r.conn.Close()
	}
}

// frameSink is a task's stdout or stderr as an io.Writer that never
// fails: once srun is gone the output is read and dropped, so that the
// task never blocks on a full pipe.
type frameSink struct {
	r    *relay
	kind stepio.Kind
	task uint32
}

func (f frameSink) Write(p []byte) (int, error) {
	if len(p) > 0 {
		f.r.send(stepio.Frame{Kind: f.kind, Task: f.task, Payload: append([]byte(nil), p...)})
	}
	return len(p), nil
}

// copyOutput relays a task's output until it ends; done is closed then.
// A terminal's master reads EIO once the task and everything holding the
// terminal are gone: that is its end.
func (r *relay) copyOutput(src *os.File, kind stepio.Kind, rank int, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	sink := frameSink{r: r, kind: kind, task: uint32(rank)}
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _ = sink.Write(buf[:n])
		}
		if err != nil {
			if err != io.EOF && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
				log.Printf("task %d output: %v", rank, err)
			}
			return
		}
	}
}

// serveControl reads srun's frames: input for rank 0, signals for one
// task or all, terminal sizes. When srun goes away, rank 0's input ends.
func (r *relay) serveControl(tasks []*task) {
	if r.conn == nil {
		closeAllStdin(tasks)
		r.pmi.srunGone(errors.New("srun could not be reached"))
		return
	}
	byRank := make(map[uint32]*task, len(tasks))
	for _, t := range tasks {
		byRank[uint32(t.rank)] = t
	}
	for {
		f, err := stepio.Read(r.conn)
		if err != nil {
			if !r.broken.Load() {
				r.lost(err)
			}
			closeAllStdin(tasks)
			r.pmi.srunGone(err)
			return
		}
		switch f.Kind {
		case stepio.FenceDone, stepio.Abort:
			r.pmi.frame(f)
		case stepio.Stdin:
			if t := byRank[0]; t != nil && (f.Task == 0 || f.Task == stepio.AllTasks) {
				t.writeStdin(f.Payload)
			}
		case stepio.Signal:
			if len(f.Payload) != 1 || f.Payload[0] == 0 {
				continue
			}
			sig := syscall.Signal(f.Payload[0])
			for _, t := range tasks {
				if f.Task == stepio.AllTasks || f.Task == uint32(t.rank) {
					t.signal(sig)
				}
			}
		case stepio.Winsize:
			rows, cols, err := stepio.DecodeWinsize(f.Payload)
			if t := byRank[f.Task]; err == nil && t != nil {
				t.resize(rows, cols)
			}
		}
	}
}

func closeAllStdin(tasks []*task) {
	for _, t := range tasks {
		t.closeStdin()
	}
}
