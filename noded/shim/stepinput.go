package shim

import (
	"os"
	"sync"
)

// taskInput feeds srun's input to a task on a goroutine of its own, so
// that a task that does not read its input holds up only its input, not
// the signals and window sizes that share srun's connection: up to
// inputQueue chunks wait, only then does the connection wait too.
type taskInput struct {
	f         *os.File
	pty       bool // f is the task's terminal: never closed here (it is its output too)
	q         chan []byte
	done      chan struct{}
	closeOnce sync.Once
}

const inputQueue = 64 // chunks of at most stepio.MaxPayload

func newTaskInput(f *os.File, pty bool) *taskInput {
	in := &taskInput{f: f, pty: pty, q: make(chan []byte, inputQueue), done: make(chan struct{})}
	go in.run()
	return in
}

// put queues a chunk of input; an empty one is the end of input.
func (in *taskInput) put(p []byte) {
	select {
	case in.q <- p:
	case <-in.done:
	}
}

func (in *taskInput) run() {
	for {
		select {
		case p := <-in.q:
			if len(p) == 0 && in.pty {
				p = []byte{4} // the end-of-file character, as a user's Ctrl-D
			} else if len(p) == 0 {
				in.close()
				return
			}
			if _, err := in.f.Write(p); err != nil { // the task closed its input, or ended
				in.close()
				return
			}
		case <-in.done:
			return
		}
	}
}

// close ends the input: what is queued is dropped, and a write the task
// is not reading is abandoned (closing the pipe ends it).
func (in *taskInput) close() {
	in.closeOnce.Do(func() {
		close(in.done)
		if !in.pty {
			in.f.Close()
		}
	})
}
