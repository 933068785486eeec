// Command initattack is a job's attack on its own corral-init (PID 1 of
// the job's PID namespace), for the shim's tests:
//
//	initattack ptrace        attach to PID 1, which stops it, and hold it
//	initattack leak SOCKET   hand PID 1's report pipe (/proc/1/fd/3) to
//	                         whoever listens on the abstract Unix socket
//	                         SOCKET outside the job, so the pipe outlives
//	                         the job's processes
//
// Either way it prints "attached" and then sleeps until it is killed.
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if err := attack(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "initattack:", err)
		os.Exit(1)
	}
	fmt.Println("attached")
	for {
		time.Sleep(time.Hour)
	}
}

func attack(args []string) error {
	switch {
	case len(args) == 1 && args[0] == "ptrace":
		runtime.LockOSThread() // ptrace requests must come from the tracing thread
		if err := syscall.PtraceAttach(1); err != nil {
			return fmt.Errorf("ptrace attach 1: %w", err)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(1, &ws, syscall.WALL, nil); err != nil {
			return fmt.Errorf("wait 1: %w", err)
		}
		return nil
	case len(args) == 2 && args[0] == "leak":
		pipe, err := initReportPipe()
		if err != nil {
			return err
		}
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: "@" + args[1], Net: "unix"})
		if err != nil {
			return err
		}
		_, _, err = c.WriteMsgUnix([]byte{0}, syscall.UnixRights(int(pipe.Fd())), nil)
		return err
	}
	return fmt.Errorf("usage: initattack ptrace | initattack leak SOCKET")
}

// initReportPipe opens PID 1's fd 3 through /proc (root: the pipe is
// root's) or copies it with pidfd_getfd (any job: init runs as the job's
// user, so the job may trace it).
func initReportPipe() (*os.File, error) {
	if f, err := os.OpenFile("/proc/1/fd/3", os.O_WRONLY, 0); err == nil {
		return f, nil
	}
	pidfd, err := unix.PidfdOpen(1, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open 1: %w", err)
	}
	fd, err := unix.PidfdGetfd(pidfd, 3, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_getfd 1 3: %w", err)
	}
	return os.NewFile(uintptr(fd), "report"), nil
}
