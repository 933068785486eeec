package stepio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Kind is a frame's type.
type Kind byte

const (
	Hello   Kind = 'H' // runner → srun: payload is the I/O token, then NUL and the node name
	Stdout  Kind = 'O' // runner → srun: a task's output
	Stderr  Kind = 'E' // runner → srun: a task's error output
	Exit    Kind = 'X' // runner → srun: a task ended; payload is ExitStatus
	Done    Kind = 'D' // runner → srun: every task of the node ended; payload is DoneFrame's
	Stdin   Kind = 'I' // srun → runner: input for a task; empty payload is EOF
	Signal  Kind = 'S' // srun → runner: payload is one byte, the signal number
	Winsize Kind = 'W' // srun → runner: payload is rows and cols, 2 bytes each
)

// AllTasks as a frame's task means every task of the node.
const AllTasks = ^uint32(0)

// MaxPayload bounds one frame's payload; writers split longer data.
const MaxPayload = 64 << 10

const headerLen = 9

// ErrFrame is a malformed frame: an unknown kind or an oversized payload.
var ErrFrame = errors.New("stepio: malformed frame")

// Frame is one message.
type Frame struct {
	Kind    Kind
	Task    uint32
	Payload []byte
}

// ExitStatus is an Exit frame's payload: the task's exit code, or the
// signal that ended it (then Code is 128+Signal, as a shell reports it).
type ExitStatus struct {
	Code   int
	Signal int
}

func (e ExitStatus) encode() []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b[:4], uint32(int32(e.Code)))
	binary.BigEndian.PutUint32(b[4:], uint32(int32(e.Signal)))
	return b
}

// DecodeExit reads an Exit frame's payload.
func DecodeExit(p []byte) (ExitStatus, error) {
	if len(p) != 8 {
		return ExitStatus{}, fmt.Errorf("%w: exit payload of %d bytes", ErrFrame, len(p))
	}
	return ExitStatus{
		Code:   int(int32(binary.BigEndian.Uint32(p[:4]))),
		Signal: int(int32(binary.BigEndian.Uint32(p[4:]))),
	}, nil
}

// ExitFrame is the Exit frame of task.
func ExitFrame(task uint32, e ExitStatus) Frame {
	return Frame{Kind: Exit, Task: task, Payload: e.encode()}
}

// DoneFrame is a node's last frame: every task of the node ended, and
// oomKills of the job's OOM kills on the node fell while they ran (0:
// none). With kills its payload is their count (8 bytes), and srun says
// "Out Of Memory" and exits 1, as Slurm's does when slurmstepd reports
// SIG_OOM; without, it is empty, as an older runner's.
func DoneFrame(oomKills int64) Frame {
	f := Frame{Kind: Done, Task: AllTasks}
	if oomKills > 0 {
		f.Payload = binary.BigEndian.AppendUint64(nil, uint64(oomKills))
	}
	return f
}

// DecodeDone reads a Done frame's payload: the OOM kills among the
// node's tasks.
func DecodeDone(p []byte) (oomKills int64, err error) {
	switch len(p) {
	case 0:
		return 0, nil
	case 8:
		if n := int64(binary.BigEndian.Uint64(p)); n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: done payload of %d bytes", ErrFrame, len(p))
}

// HelloFrame is a runner's first frame.
func HelloFrame(token, node string) Frame {
	return Frame{Kind: Hello, Task: AllTasks, Payload: []byte(token + "\x00" + node)}
}

// ParseHello splits a Hello payload into the token and the node name.
func ParseHello(p []byte) (token, node string, err error) {
	for i, c := range p {
		if c == 0 {
			return string(p[:i]), string(p[i+1:]), nil
		}
	}
	return "", "", fmt.Errorf("%w: hello without node name", ErrFrame)
}

// WinsizeFrame carries a terminal's size to the task on a pty.
func WinsizeFrame(task uint32, rows, cols uint16) Frame {
	b := make([]byte, 4)
	binary.BigEndian.PutUint16(b[:2], rows)
	binary.BigEndian.PutUint16(b[2:], cols)
	return Frame{Kind: Winsize, Task: task, Payload: b}
}

// DecodeWinsize reads a Winsize payload.
func DecodeWinsize(p []byte) (rows, cols uint16, err error) {
	if len(p) != 4 {
		return 0, 0, fmt.Errorf("%w: winsize payload of %d bytes", ErrFrame, len(p))
	}
	return binary.BigEndian.Uint16(p[:2]), binary.BigEndian.Uint16(p[2:]), nil
}

func known(k Kind) bool {
	switch k {
	case Hello, Stdout, Stderr, Exit, Done, Stdin, Signal, Winsize, Fence, FenceDone, Abort:
		return true
	}
	return false
}

// Read reads one frame from r. A clean end before a header is io.EOF; one
// inside a frame is io.ErrUnexpectedEOF.
func Read(r io.Reader) (Frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	f := Frame{Kind: Kind(h[0]), Task: binary.BigEndian.Uint32(h[1:5])}
	n := binary.BigEndian.Uint32(h[5:9])
	if !known(f.Kind) || n > MaxPayload {
		return Frame{}, fmt.Errorf("%w: kind %q, %d bytes", ErrFrame, h[0], n)
	}
	if n > 0 {
		f.Payload = make([]byte, n)
		if _, err := io.ReadFull(r, f.Payload); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
	}
	return f, nil
}

// Writer writes frames; it is safe for concurrent use, so every task's
// copier can share one connection.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sends f, split into frames of at most MaxPayload bytes (an empty
// payload stays one empty frame: for Stdin it means EOF).
func (w *Writer) Write(f Frame) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := f.Payload
	for {
		n := min(len(p), MaxPayload)
		var h [headerLen]byte
		h[0] = byte(f.Kind)
		binary.BigEndian.PutUint32(h[1:5], f.Task)
		binary.BigEndian.PutUint32(h[5:9], uint32(n))
		if _, err := w.w.Write(append(h[:], p[:n]...)); err != nil {
			return err
		}
		p = p[n:]
		if len(p) == 0 {
			return nil
		}
	}
}

// TaskWriter is an io.Writer that sends what is written as kind frames of
// one task (a task's stdout or stderr).
func (w *Writer) TaskWriter(kind Kind, task uint32) io.Writer {
	return taskWriter{w: w, kind: kind, task: task}
}

type taskWriter struct {
	w    *Writer
	kind Kind
	task uint32
}

func (t taskWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := t.w.Write(Frame{Kind: t.kind, Task: t.task, Payload: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}
