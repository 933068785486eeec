//go:build !slurmonly

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// child is a daemon started by `corral dev`, logging to its own file.
type child struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result, valid after done
}

func startChild(name, bin string, args []string, logPath string, cgroup *os.File) (*child, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open log for %s: %v", name, err)
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true, // Ctrl-C reaches only corral dev, which stops children in order
		// If corral dev itself dies (kill -9), the children follow it.
		Pdeathsig: syscall.SIGTERM,
	}
	if cgroup != nil { // started inside it, never for a moment elsewhere
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(cgroup.Fd())
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s (%s): %v", name, bin, err)
	}
	k := &child{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		k.err = cmd.Wait()
		close(k.done)
	}()
	return k, nil
}

func (k *child) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

func (k *child) unexpectedExit() error {
	<-k.done
	status := "exit status 0"
	if k.err != nil {
		status = k.err.Error()
	}
	return fmt.Errorf("%s exited unexpectedly (%s); see %s", k.name, status, k.log)
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs.
func (k *child) stop(grace time.Duration) {
	if k.exited() {
		return
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(grace):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}

// stopAll stops node daemons first (together), then the controller, so
// that nodes do not spend their last moments failing to reach it.
func stopAll(kids []*child) {
	if len(kids) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, k := range kids[1:] {
		wg.Add(1)
		go func(k *child) {
			defer wg.Done()
			k.stop(stopGrace)
		}(k)
	}
	wg.Wait()
	kids[0].stop(stopGrace)
}
