package shim

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/corral-hpc/corral/container"
)

// File descriptors noded passes to the shim.
const (
	ControlFD = 3 // noded -> shim: 'c' cancels the job (a runner: the step)
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

// Main is `corral-shim <jobdir>` (or FeaturesArg, or StepArg: a step's runner). It must run on the main goroutine.
// It returns the process exit status: 0 once result.json is written.
func Main(args []string) int {
	if len(args) > 0 && args[0] == StepArg {
		return StepMain(args[1:])
	}
	container.KeepMainThread()
	if len(args) == 1 && args[0] == FeaturesArg {
		if container.SeccompEnabled {
			fmt.Println(FeatureSeccomp)
		}
		return 0
	}
	var pr *prepared
	if len(args) == 1 && args[0] == SpareArg { // spare.go
		dir, p, ok, err := awaitJob()
		if err != nil {
			p.release()
			fmt.Fprintln(os.Stderr, "corral-shim --spare:", err)
			return 1
		}
		if !ok {
			return 0 // not needed after all
		}
		args, pr = []string{dir}, p
	}
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(os.Stderr, "usage: corral-shim /ABSOLUTE/JOB/DIR (started by corral-noded, not by hand)")
		return 2
	}
	dir := args[0]
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("shim " + filepath.Base(dir) + ": ")
	sup, err := startSupervisor(filepath.Join(dir, PidFile), true)
	if err != nil {
		pr.release()
		log.Print(err)
		return 1
	}
	written := false
	runJob(dir, Controls{Cancel: sup.cancel, Started: sup.started, Configuring: func(what string) {
		sup.say("configuring %s %s", time.Now().Format(time.RFC3339Nano), what)
	}, Ended: func(res *Result) {
		if res.Message != "" {
			log.Printf("job ended %s: %s", res.State, res.Message)
		}
		if err := WriteResult(dir, res); err != nil {
			log.Printf("writing the result: %v", err)
			return
		}
		written = true
		sup.say("%s", EndedLine)
	}}, pr)
	if !written {
		return 1
	}
	return 0
}
