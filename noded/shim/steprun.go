package shim

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/stepio"
)

// StepControls connect a step's runner to its supervisor.
type StepControls struct {
	// Cancel is closed to cancel the step: SIGTERM to the tasks, SIGKILL
	// after the job's kill wait.
	Cancel <-chan struct{}
	// Kill, if closed before Cancel, makes the cancel SIGKILL the tasks
	// at once (scancel JOB.STEP).
	Kill <-chan struct{}
	// Started, if set, is called once the node's tasks run.
	Started func(time.Time)
}

// RunStep runs step stepID of the job in jobDir on this node to its end
// and returns its result; it does not write result.json (StepMain does).
// Every failure becomes a result with a message, and srun hears of it
// (the message on each task's stderr, then an Exit per task and Done).
func RunStep(jobDir string, stepID int, ctl StepControls) *StepResult {
	job, err := ReadJob(jobDir)
	if err != nil {
		return stepFailed(nil, "reading the job: %v", err)
	}
	s, err := ReadStepJob(StepDir(jobDir, stepID))
	if err != nil {
		return stepFailed(nil, "reading the step: %v", err)
	}
	rl := dialSrun(s)
	defer rl.close()
	if err := checkStep(job, s, stepID); err != nil {
		return rl.fail(s.Ranks, "%v", err)
	}
	// early: the container still starts, and the tasks queue on the
	// shim's spawn socket (stepearly.go); else the container runs.
	early, err := waitJobReady(jobDir, job, ctl.Cancel) // stepwait.go
	if err != nil {
		return rl.fail(s.Ranks, "%v", err)
	}
	var ctr *container.Running
	if early == nil {
		if ctr, err = container.Open(job.RuncRoot, ContainerID(job.Launch.JobID)); err != nil {
			return rl.fail(s.Ranks, "%v", err)
		}
	}
	if cancelled(ctl.Cancel) {
		if early != nil {
			early.close()
		}
		return rl.fail(s.Ranks, "%v", errStepCancelled)
	}
	pm, err := newStepPMI(s, rl) // steppmi.go; nil without --mpi
	if err != nil {
		if early != nil {
			early.close()
		}
		return rl.fail(s.Ranks, "%v", err)
	}
	var oom func() *stepOOMWatch // stepoom.go
	if early == nil {
		w := watchOOM(ctr)
		oom = func() *stepOOMWatch { return w }
	}
	tasks, err := startTasks(ctr, early, job, s, pm)
	if err != nil {
		pm.close()
		return rl.fail(s.Ranks, "%v", err)
	}
	if early != nil {
		oom = earlyOOMWatch(job, jobDir)
	}
	writeTaskPids(StepDir(jobDir, stepID), tasks)
	if ctl.Started != nil {
		ctl.Started(time.Now())
	}
	rl.pmi = pm
	pm.serve(tasks, killTasks(tasks))
	go rl.serveControl(tasks)
	stopCancel := watchCancel(tasks, ctl.Cancel, ctl.Kill, job.KillWait())
	defer stopCancel()

	res := &StepResult{Tasks: make([]TaskResult, len(tasks))}
	var mu sync.Mutex
	var all sync.WaitGroup
	for i, t := range tasks {
		all.Add(1)
		go func() {
			defer all.Done()
			x := waitTask(rl, t)
			st := exitStatusOf(x.status)
			rl.send(stepio.ExitFrame(uint32(t.rank), st))
			mu.Lock()
			defer mu.Unlock()
			res.Tasks[i] = TaskResult{Rank: t.rank, ExitCode: st.Code, Signal: st.Signal}
			if x.usage {
				res.CPUTimeUsec += x.cpuUsec
				res.PeakMemBytes = max(res.PeakMemBytes, x.maxRSSKiB<<10)
			}
		}()
	}
	all.Wait()
	if res.OOMKills = oom().kills(res.Tasks); res.OOMKills > 0 {
		rl.send(stepio.Frame{Kind: stepio.Stderr, Task: uint32(tasks[0].rank),
			Payload: []byte(oomMessage(res.OOMKills, job.Launch.JobID, stepID, s.Node))})
	}
	rl.send(stepio.DoneFrame(res.OOMKills))
	res.ExitCode, res.Signal = highest(res.Tasks)
	pm.settle(res)
	return res
}

// waitTask relays the task's output until it ends and reaps it. Its
// output may outlive it (a background process holding the pipe) by at
// most outputGrace; then it is no longer read.
func waitTask(rl *relay, t *task) taskExit {
	var copies sync.WaitGroup
	f := t.p.files()
	outs := []*os.File{f.stdout, f.stderr}
	kinds := []stepio.Kind{stepio.Stdout, stepio.Stderr}
	if t.pty {
		outs, kinds = []*os.File{f.console}, []stepio.Kind{stepio.Stdout}
	}
	for i, f := range outs {
		copies.Add(1)
		go rl.copyOutput(f, kinds[i], t.rank, &copies)
	}
	x, err := t.p.Wait()
	t.ended.Store(true)
	if err != nil {
		log.Printf("task %d: %v", t.rank, err)
	}
	copied := make(chan struct{})
	go func() { copies.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(outputGrace):
		for _, f := range outs {
			f.Close() // ends the copy's read
		}
		<-copied
	}
	for _, f := range outs {
		f.Close()
	}
	t.closeStdin()
	t.p.Close()
	return x
}

// watchCancel stops the tasks when cancel closes: SIGTERM, then after
// killWait SIGKILL; SIGKILL at once if kill closed first. stop ends the
// watch.
func watchCancel(tasks []*task, cancel, killNow <-chan struct{}, killWait time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-cancel:
		case <-done:
			return
		}
		if cancelled(killNow) {
			killWait = 0
		} else {
			for _, t := range tasks {
				t.signal(syscall.SIGTERM)
			}
		}
		kill := time.NewTimer(killWait)
		defer kill.Stop()
		select {
		case <-kill.C:
			for _, t := range tasks {
				t.signal(syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

// checkStep refuses a step.json that is not for this job and step, or
// whose tasks would run as another user than the job's.
func checkStep(job *Job, s *StepJob, stepID int) error {
	c := &s.Launch.Credential
	switch {
	case c.JobID != job.Launch.JobID || c.StepID != stepID:
		return fmt.Errorf("step.json is for step %d.%d, not %d.%d", c.JobID, c.StepID, job.Launch.JobID, stepID)
	case c.UID != job.Launch.UID:
		return fmt.Errorf("the step's user %d is not the job's (%d)", c.UID, job.Launch.UID)
	case len(s.Launch.Argv) == 0:
		return fmt.Errorf("the step has no command")
	case len(s.Ranks) == 0:
		return fmt.Errorf("no task of the step runs on %s", s.Node)
	}
	return nil
}

// fail reports a step whose tasks could not run: the message on each
// task's stderr, an Exit with code 1 per task, Done.
func (r *relay) fail(ranks []int, format string, a ...any) *StepResult {
	res := stepFailed(ranks, format, a...)
	for _, rank := range ranks {
		r.send(stepio.Frame{Kind: stepio.Stderr, Task: uint32(rank), Payload: []byte("corral: " + res.Message + "\n")})
		r.send(stepio.ExitFrame(uint32(rank), stepio.ExitStatus{Code: 1}))
	}
	r.send(stepio.DoneFrame(0))
	return res
}

func stepFailed(ranks []int, format string, a ...any) *StepResult {
	res := &StepResult{ExitCode: 1, Message: fmt.Sprintf(format, a...), Tasks: []TaskResult{}}
	for _, rank := range ranks {
		res.Tasks = append(res.Tasks, TaskResult{Rank: rank, ExitCode: 1})
	}
	return res
}

// highest is the highest exit code of the tasks and that task's signal.
func highest(ts []TaskResult) (code, sig int) {
	for _, t := range ts {
		if t.ExitCode > code {
			code, sig = t.ExitCode, t.Signal
		}
	}
	return code, sig
}

func tvUsec(tv syscall.Timeval) int64 { return tv.Sec*1e6 + tv.Usec }

// StepMain is `corral-shim step <jobdir> <stepid>`; it returns the exit
// status: 0 once result.json is written.
func StepMain(args []string) int {
	container.KeepMainThread()
	stepID, err := strconv.Atoi(safeArg(args, 1))
	if len(args) != 2 || !filepath.IsAbs(args[0]) || err != nil {
		fmt.Fprintln(os.Stderr, "usage: corral-shim step /ABSOLUTE/JOB/DIR STEPID (started by corral-noded, not by hand)")
		return 2
	}
	jobDir := args[0]
	dir := StepDir(jobDir, stepID)
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("step " + filepath.Base(jobDir) + "." + strconv.Itoa(stepID) + ": ")
	sup, err := startSupervisor(filepath.Join(dir, RunnerPidFile), false)
	if err != nil {
		log.Print(err)
		return 1
	}
	res := RunStep(jobDir, stepID, StepControls{Cancel: sup.cancel, Kill: sup.kill, Started: sup.started})
	if res.Message != "" {
		log.Printf("step failed: %s", res.Message)
	}
	if err := WriteStepResult(dir, res); err != nil {
		log.Printf("writing the result: %v", err)
		return 1
	}
	sup.say("%s", EndedLine)
	return 0
}

func safeArg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}
