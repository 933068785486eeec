package shim

import (
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepio"
)

// listenSrun accepts one connection on loopback and returns every frame
// it reads, once the connection ends; hangUp, if set, closes it right
// after the hello.
func listenSrun(t *testing.T, hangUp bool) (addr string, frames <-chan []stepio.Frame) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	out := make(chan []stepio.Frame, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			out <- nil
			return
		}
		defer c.Close()
		var got []stepio.Frame
		for {
			f, err := stepio.Read(c)
			if err != nil {
				out <- got
				return
			}
			got = append(got, f)
			if hangUp {
				c.Close()
			}
		}
	}()
	return ln.Addr().String(), out
}

func stepAt(addr string) *StepJob {
	return &StepJob{Node: "n1", Launch: api.StepLaunch{IOAddr: addr, IOToken: "secret"}}
}

// runOutput runs a real process whose stdout and stderr the relay copies
// as task rank's.
func runOutput(t *testing.T, rl *relay, rank int, script string) {
	t.Helper()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	var copies sync.WaitGroup
	copies.Add(2)
	go rl.copyOutput(outR, stepio.Stdout, rank, &copies)
	go rl.copyOutput(errR, stepio.Stderr, rank, &copies)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the process did not run to its end: %v", err)
	}
	copies.Wait()
	outR.Close()
	errR.Close()
}

// TestRelayFrames: the runner says hello with the token and its node,
// relays a process's stdout and stderr tagged with its rank, and a
// failure to start becomes the reason, an exit per task and Done.
func TestRelayFrames(t *testing.T) {
	addr, frames := listenSrun(t, false)
	rl := dialSrun(stepAt(addr))
	runOutput(t, rl, 3, "echo out; echo err >&2")
	rl.fail([]int{4}, "no container")
	rl.close()
	got := <-frames
	if len(got) == 0 {
		t.Fatal("srun heard nothing")
	}
	if tok, node, err := stepio.ParseHello(got[0].Payload); got[0].Kind != stepio.Hello || tok != "secret" || node != "n1" || err != nil {
		t.Errorf("first frame %+v, want hello with the token and node", got[0])
	}
	var out, errOut string
	var tail []stepio.Frame
	for _, f := range got[1:] {
		switch {
		case f.Task == 3 && f.Kind == stepio.Stdout:
			out += string(f.Payload)
		case f.Task == 3 && f.Kind == stepio.Stderr:
			errOut += string(f.Payload)
		default:
			tail = append(tail, f)
		}
	}
	if out != "out\n" || errOut != "err\n" {
		t.Errorf("task 3: stdout %q stderr %q", out, errOut)
	}
	if len(tail) != 3 || tail[0].Kind != stepio.Stderr || string(tail[0].Payload) != "corral: no container\n" ||
		tail[1].Kind != stepio.Exit || tail[1].Task != 4 || tail[2].Kind != stepio.Done {
		t.Fatalf("after the output: %+v, want the reason, task 4's exit, Done", tail)
	}
	if st, err := stepio.DecodeExit(tail[1].Payload); err != nil || st != (stepio.ExitStatus{Code: 1}) {
		t.Errorf("exit %+v %v, want code 1", st, err)
	}
}

// TestRelayWithoutSrun: when srun hangs up, or cannot be reached at all,
// a task's output is read and dropped, so the task runs to its end
// instead of blocking on a full pipe.
func TestRelayWithoutSrun(t *testing.T) {
	addr, frames := listenSrun(t, true)
	rl := dialSrun(stepAt(addr))
	if got := <-frames; len(got) != 1 || got[0].Kind != stepio.Hello {
		t.Fatalf("srun heard %v, want only the hello", got)
	}
	runOutput(t, rl, 0, "head -c 4000000 /dev/zero; head -c 4000000 /dev/zero >&2")
	if !rl.broken.Load() {
		t.Error("the relay did not notice srun was gone")
	}
	rl.close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	rl = dialSrun(stepAt(closed))
	runOutput(t, rl, 0, "head -c 4000000 /dev/zero")
	rl.fail([]int{0}, "nobody listens")
	rl.close()
}
