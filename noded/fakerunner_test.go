package noded

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/internal/fsutil"
	"github.com/corral-hpc/corral/noded/shim"
)

// fakeShimArg makes the test binary a stand-in for corral-shim that runs
// no container: as a job's shim it holds the "job" until cancelled (the
// control pipe's 'c' or SIGTERM); as a step runner (`step <jobdir> <id>`)
// it honours the runner's contract: runner.pid, "started" and EndedLine
// on fd 4, result.json. The step's argv says what its tasks do:
//
//	exit N   end at once with exit code N
//	wait N   run until <stepdir>/release exists, then exit N; SIGTERM
//	         ends it as a task killed by SIGTERM, shim.StepKillSignal
//	         as one killed by SIGKILL
//	die      exit without a result, as a crashed runner
//	stubborn ignore SIGTERM and never end
//
// Every start appends a line to <stepdir>/starts.
const fakeShimArg = "fakeshim"

func fakeShimMain(args []string) int {
	switch {
	case len(args) == 1 && args[0] == shim.FeaturesArg:
		return 0
	case len(args) == 1 && args[0] == shim.SpareArg:
		return fakeSpare()
	case len(args) == 3 && args[0] == shim.StepArg:
		return fakeRunner(args[1], args[2])
	case len(args) == 1:
		return fakeJobShim(args[0])
	}
	fmt.Fprintln(os.Stderr, "fake shim: bad arguments", args)
	return 2
}

// fakePreparedFile, in a preparation's directory, is the Preparation a
// fake spare was handed, as it read it.
const fakePreparedFile = "fake-prepared"

// fakeSpare is a spare shim that prepares nothing: it copies the
// Preparation it is handed into its directory, then runs the job it is
// handed as fakeJobShim, and removes the directory when it ends, as a
// real spare does.
func fakeSpare() int {
	br := bufio.NewReader(os.NewFile(shim.JobFD, "job"))
	line, err := br.ReadString('\n')
	var prepDir string
	if err == nil && strings.HasPrefix(line, "{") {
		var p shim.Preparation
		must(json.Unmarshal([]byte(line), &p))
		prepDir = p.Dir
		must(os.WriteFile(filepath.Join(p.Dir, fakePreparedFile), []byte(line), 0o600))
		line, err = br.ReadString('\n')
	}
	defer func() {
		if prepDir != "" {
			must(os.RemoveAll(prepDir))
		}
	}()
	if err != nil {
		return 0
	}
	return fakeJobShim(strings.TrimSuffix(line, "\n"))
}

func fakeJobShim(dir string) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	signal.Ignore(syscall.SIGPIPE)
	// With the start time, as a real shim writes it: a spare's command
	// line does not name its job.
	start, err := shim.ProcStart(os.Getpid())
	must(err)
	must(os.WriteFile(filepath.Join(dir, shim.PidFile), fmt.Appendf(nil, "%d %d\n", os.Getpid(), start), 0o600))
	status := os.NewFile(shim.StatusFD, "status")
	must(os.WriteFile(filepath.Join(dir, shim.StartedFile), nil, 0o600))
	fmt.Fprintf(status, "started %s\n", time.Now().Format(time.RFC3339Nano))
	cancel := make(chan struct{}, 1)
	ctl := os.NewFile(shim.ControlFD, "control")
	go func() {
		b := make([]byte, 1)
		for {
			n, err := ctl.Read(b)
			if n == 1 && b[0] == 'c' {
				cancel <- struct{}{}
			}
			if err != nil {
				return // noded is gone: carry on
			}
		}
	}()
	select {
	case <-term:
	case <-cancel:
	}
	must(shim.WriteResult(dir, &shim.Result{State: api.StateCancelled, End: time.Now()}))
	fmt.Fprintln(status, shim.EndedLine)
	return 0
}

func fakeRunner(jobDir, id string) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, shim.StepKillSignal)
	signal.Ignore(syscall.SIGPIPE)
	dir := filepath.Join(jobDir, shim.StepsDir, id)
	var sj shim.StepJob
	b, err := os.ReadFile(filepath.Join(dir, shim.StepFile))
	must(err)
	must(json.Unmarshal(b, &sj))
	// The pid file first, whole (noded writes it too, the same bytes),
	// then the start count the tests wait for: a test that saw the start
	// must find the pid, never a file half written.
	must(fsutil.WriteFileAtomic(filepath.Join(dir, shim.RunnerPidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600))
	f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	must(err)
	fmt.Fprintln(f, os.Getpid())
	f.Close()
	status := os.NewFile(shim.StatusFD, "status")
	fmt.Fprintf(status, "started %s\n", time.Now().Format(time.RFC3339Nano))
	argv := sj.Launch.Argv
	code := func() int {
		if len(argv) < 2 {
			return 0
		}
		n, _ := strconv.Atoi(argv[1])
		return n
	}
	res := shim.StepResult{}
	switch argv[0] {
	case "die":
		return 3
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "exit":
		res.ExitCode = code()
	case "wait":
		res.ExitCode = code()
	wait:
		for {
			select {
			case sig := <-term:
				res = shim.StepResult{Signal: int(syscall.SIGTERM)}
				if sig == shim.StepKillSignal {
					res.Signal = int(syscall.SIGKILL)
				}
				break wait
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
				break
			}
		}
	}
	for _, r := range sj.Ranks {
		res.Tasks = append(res.Tasks, shim.TaskResult{Rank: r, ExitCode: res.ExitCode, Signal: res.Signal})
	}
	b, err = json.Marshal(res)
	must(err)
	must(shim.WriteFileAtomic(filepath.Join(dir, shim.StepResultFile), b, 0o600))
	fmt.Fprintln(status, shim.EndedLine)
	return 0
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake shim:", err)
		os.Exit(1)
	}
}
