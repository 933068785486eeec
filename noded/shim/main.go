package shim

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/container"
	"golang.org/x/sys/unix"
)

// File descriptors noded passes to the shim.
const (
	ControlFD = 3 // noded -> shim: 'c' cancels the job
	StatusFD  = 4 // shim -> noded: "started <time>\n", ..., EndedLine
)

// FeaturesArg asks a shim binary what it was built with; it prints one
// feature per line (FeatureSeccomp: it filters jobs' system calls).
const (
	FeaturesArg    = "--features"
	FeatureSeccomp = "seccomp"
)

// EndedLine on the status pipe says result.json is written: the job is
// over and its container gone; the shim is only removing scratch files.
const EndedLine = "ended"

// Main is `corral-shim <jobdir>` (or FeaturesArg). It must run on the main goroutine.
// It returns the process exit status: 0 once result.json is written.
func Main(args []string) int {
	container.KeepMainThread()
	if len(args) == 1 && args[0] == FeaturesArg {
		if container.SeccompEnabled {
			fmt.Println(FeatureSeccomp)
		}
		return 0
	}
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(os.Stderr, "usage: corral-shim /ABSOLUTE/JOB/DIR (started by corral-noded, not by hand)")
		return 2
	}
	dir := args[0]
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("shim " + filepath.Base(dir) + ": ")
	if err := WriteFileAtomic(filepath.Join(dir, PidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		log.Print(err)
		return 1
	}
	// In its own session the shim gets no terminal signals; should one
	// come anyway, or should noded's end of a pipe vanish, carry on.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)

	cancel := make(chan struct{})
	var once sync.Once
	doCancel := func() { once.Do(func() { close(cancel) }) }
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		doCancel()
	}()
	if ctl := inherited(ControlFD, "control"); ctl != nil {
		go func() {
			buf := make([]byte, 1)
			for {
				n, err := ctl.Read(buf)
				if n == 1 && buf[0] == 'c' {
					doCancel()
				}
				if err != nil {
					return // noded went away: the job carries on
				}
			}
		}()
	}
	status := inherited(StatusFD, "status")
	written := false
	Run(dir, Controls{Cancel: cancel, Started: func(t time.Time) {
		if status != nil {
			fmt.Fprintf(status, "started %s\n", t.Format(time.RFC3339Nano))
		}
	}, Configuring: func(what string) {
		if status != nil {
			fmt.Fprintf(status, "configuring %s %s\n", time.Now().Format(time.RFC3339Nano), what)
		}
	}, Ended: func(res *Result) {
		if res.Message != "" {
			log.Printf("job ended %s: %s", res.State, res.Message)
		}
		if err := WriteResult(dir, res); err != nil {
			log.Printf("writing the result: %v", err)
			return
		}
		written = true
		if status != nil {
			fmt.Fprintln(status, EndedLine)
		}
	}})
	if !written {
		return 1
	}
	return 0
}

// inherited returns fd as a file if the parent passed it.
func inherited(fd int, name string) *os.File {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}
