package shim

import (
	"github.com/corral-hpc/corral/internal/fsutil"

	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/initproto"
)

// Controls connects a running job to its supervisor.
type Controls struct {
	// Cancel is closed to cancel the job (SIGTERM, kill-wait, SIGKILL).
	Cancel <-chan struct{}
	// Started, if set, is called once the job's process runs.
	Started func(time.Time)
	// Configuring, if set, is called when the node must prepare something
	// slow before the script can run (pulling the job's image).
	Configuring func(what string)
	// Ended, if set, is called once with the final result, after the
	// container is gone but before the job's scratch files (script, /tmp)
	// are removed: the end can be reported while they are deleted.
	Ended func(*Result)
}

// ending says why the shim stopped the job, if it did.
type ending int

const (
	endNatural ending = iota
	endCancelled
	endTimeout
)

// Run runs the job in dir to its end and returns the result; it does not
// write result.json (Main does, from Controls.Ended). Every failure
// becomes a FAILED result with a message. When Run returns, everything
// created has been removed: the container before Controls.Ended, the
// scratch files after it.
func Run(dir string, ctl Controls) *Result { return runJob(dir, ctl, nil) }

// runJob is Run for a shim that may hold a prepared container (a
// spare's, prepared.go): the job adopts it when it may, and it is gone
// when runJob returns.
func runJob(dir string, ctl Controls, pr *prepared) *Result {
	var r *Result
	cleanup := func() {}
	job, err := ReadJob(dir)
	if err != nil {
		pr.discard(&Job{})
		r = failed(time.Time{}, "reading the job: %v", err)
	} else if r, cleanup, err = run(dir, job, ctl, pr); err != nil {
		r = failed(r.Start, "%v", err)
	}
	if ctl.Ended != nil {
		ctl.Ended(r)
	}
	cleanup()
	pr.release()
	return r
}

func failed(start time.Time, format string, a ...any) *Result {
	return &Result{State: api.StateFailed, ExitCode: 1, Message: fmt.Sprintf(format, a...), Start: start, End: time.Now()}
}

func cancelled(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func run(dir string, job *Job, ctl Controls, pr *prepared) (res *Result, cleanup func(), err error) {
	l := &job.Launch
	cleanup = func() {}
	if !pr.adoptable(job) {
		pr.discard(job) // prepared.go
	}
	if !filepath.IsAbs(l.WorkDir) {
		return &Result{}, cleanup, fmt.Errorf("work directory %q is not absolute", l.WorkDir)
	}
	umask, err := api.ParseUmask(l.Umask)
	if err != nil {
		return &Result{}, cleanup, err
	}
	id := Identity{UID: l.UID, GID: l.GID, Groups: l.Groups, Umask: &umask}
	files, stopped, err := openUserFiles(id, job, ctl) // userfiles.go
	if err != nil {
		return &Result{}, cleanup, err
	}
	if stopped != nil {
		return stopped, cleanup, nil
	}
	defer files.Close()
	ctlBinds, err := ctlBind(dir, job) // ctlsock.go
	if err != nil {
		return &Result{}, cleanup, err
	}
	if pr.adoptable(job) {
		if cancelled(ctl.Cancel) {
			return &Result{State: api.StateCancelled, End: time.Now()}, cleanup, nil
		}
		if res, ok := pr.adopt(dir, job, ctl, append(ctlBinds, files.binds...)); ok {
			return res, cleanup, nil
		}
	}
	stdio := files.stdio
	if err := pullImage(job, ctl, stdio.err); err != nil {
		if cancelled(ctl.Cancel) { // cancelled while pulling
			return &Result{State: api.StateCancelled, End: time.Now()}, cleanup, nil
		}
		return &Result{}, cleanup, err
	}

	script := filepath.Join(dir, ScriptFile)
	rootfs := filepath.Join(dir, RootfsDir)
	cleanup = func() {
		for _, p := range []string{script, rootfs} {
			if rerr := container.RemoveTree(p); rerr != nil {
				log.Printf("job %d: cleanup: %v", l.JobID, rerr)
			}
		}
	}
	args := append([]string{initproto.InitPath, initproto.StdioArg, initproto.SpawnArg, initproto.ScriptPath}, l.Args...)
	if l.Role == api.RoleExtern {
		args = []string{initproto.InitPath, initproto.StdioArg, initproto.SpawnArg, initproto.HoldArg}
	} else if err := writeOwned(script, []byte(l.Script), 0o755, id); err != nil {
		return &Result{}, cleanup, fmt.Errorf("writing the script: %w", err)
	}
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return &Result{}, cleanup, err
	}
	if cancelled(ctl.Cancel) {
		return &Result{State: api.StateCancelled, ExitCode: 0, End: time.Now()}, cleanup, nil
	}

	host, err := cgroup.Detect()
	if err != nil {
		return &Result{}, cleanup, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return &Result{}, cleanup, err
	}
	defer reportR.Close()
	spawn, err := spawnPair() // stepspawn.go
	if err != nil {
		return &Result{}, cleanup, err
	}
	defer closeFiles(spawn)
	publishSpawn(dir, spawn[1]) // stepearly.go
	spec := &container.Spec{
		ID:         ContainerID(l.JobID),
		StateRoot:  job.RuncRoot,
		Rootfs:     rootfs,
		Binds:      append(append(binds(job, script), ctlBinds...), files.binds...),
		Image:      imageOf(job, dir),
		Hide:       job.Hide,
		ShmBytes:   l.ShmBytes,
		CgroupPath: job.CgroupPath,
		Devices:    gpuDevices(job), // gpu.go
		Resources:  host.Resources(job.limits()),
		Args:       args,
		Env:        withImageEnv(Environment(job), job.ImageEnv),
		Cwd:        l.WorkDir,
		UID:        int(l.UID),
		GID:        int(l.GID),
		Umask:      &umask,
		Groups:     intGroups(l.Groups),
		ExtraFiles: []*os.File{reportW, stdio.in, stdio.out, stdio.err, spawn[0], spawn[1]}, // not Stdout etc.: runc chowns those (initproto.StdioArg); the spawn socket (SpawnArg)
	}
	setup, endWatch := watchSetup(job, ctl)
	spec.Stop = setup.c
	c, err := container.Start(spec)
	endWatch()
	reportW.Close()
	if errors.Is(err, container.ErrStopped) {
		return setup.result(err), cleanup, nil
	}
	if err != nil {
		return &Result{}, cleanup, err
	}
	return toEnd(dir, job, ctl, &running{c: c, report: reportR, mode: host.Mode}), cleanup, nil
}

// running is a job's container once it runs, started here or adopted
// (prepared.go), with what its supervision reads.
type running struct {
	c      *container.Container
	report *os.File // corral-init's report pipe, its write end closed here
	mode   cgroup.Mode
	// cpuBefore is the CPU time its cgroup had used before the job had
	// it: a prepared container's own start, which is not the job's.
	cpuBefore int64
}

// toEnd supervises the job in its running container to its end, for a
// container started by run or adopted from a prepared spare alike: it
// says the job started, enforces cancel and the time limit, reads the
// cgroup's usage, destroys the container and returns the result.
func toEnd(dir string, job *Job, ctl Controls, r *running) *Result {
	c, l := r.c, &job.Launch
	start := time.Now()
	// The file first: a step's runner waiting for the container wakes on
	// it (stepwait.go), and need not wait behind noded's handling of the
	// status line. What follows the time (startedText) spares a runner
	// whose tasks were queued early loads of libcontainer's state.
	if startedHook != nil {
		startedHook()
	}
	_ = fsutil.ReplaceFile(filepath.Join(dir, StartedFile), startedText(start, c.Pid(), c.CgroupPaths()), 0o600) // stepearly.go
	if ctl.Started != nil {
		ctl.Started(start)
	}

	ready := make(chan struct{})
	reportc := make(chan []byte, 1)
	go readReport(r.report, ready, reportc)
	why, ps := supervise(c, dir, job, ctl, ready)
	// corral-init wrote its report before it exited, so it is in the pipe
	// by now. Wait no longer than reportGrace for it: a copy of the pipe's
	// write end may live on outside the job (a root job can hand one out),
	// so end-of-file may never come.
	_ = r.report.SetReadDeadline(time.Now().Add(reportGrace))
	report := <-reportc

	res := &Result{Start: start}
	usage, uerr := cgroup.ReadUsage(r.mode, c.CgroupPaths())
	if uerr != nil {
		log.Printf("job %d: reading usage: %v", l.JobID, uerr)
	}
	if derr := c.Destroy(); derr != nil {
		log.Printf("job %d: destroying the container: %v", l.JobID, derr)
	}
	res.End = time.Now()
	res.PeakMemBytes, res.CPUTimeUsec, res.OOMKills = usage.PeakMemBytes, max(0, usage.CPUTimeUsec-r.cpuBefore), usage.OOMKills
	if res.OOMKills > 0 {
		res.StepOOMKills = stepsOOMKills(dir) // stepoom.go
	}
	res.ExitCode, res.Signal, res.Message = exitStatus(ps, report)
	res.State = decide(why, res)
	return res
}

// maxTimeLimit (seconds) fits a time.Duration; longer limits mean none.
const maxTimeLimit = int64(1<<63-1) / int64(time.Second)

// reportGrace bounds the wait for corral-init's report once it is gone.
const reportGrace = time.Second

// readReport reads corral-init's pipe: the Ready line closes ready, the
// JSON report that follows is sent on reportc as soon as it is whole (nil
// if there is none), without waiting for end-of-file.
func readReport(r io.Reader, ready chan<- struct{}, reportc chan<- []byte) {
	br := bufio.NewReader(io.LimitReader(r, 64<<10))
	line, err := br.ReadString('\n')
	if err == nil && strings.TrimSpace(line) == initproto.Ready {
		close(ready)
		line = ""
	}
	var rep json.RawMessage
	if json.NewDecoder(io.MultiReader(strings.NewReader(line), br)).Decode(&rep) != nil {
		rep = nil
	}
	reportc <- rep
}

// supervise waits for the job while enforcing its time limit and cancel:
// SIGTERM (corral-init forwards it to every process; held until
// corral-init is ready to forward), then after the kill wait SIGKILL,
// which ends the whole PID namespace.
func supervise(c *container.Container, dir string, job *Job, ctl Controls, ready <-chan struct{}) (ending, *os.ProcessState) {
	type waited struct{ ps *os.ProcessState }
	done := make(chan waited, 1)
	go func() {
		ps, _ := c.Wait()
		done <- waited{ps}
	}()
	var limit <-chan time.Time
	if job.Launch.TimeLimit > 0 && job.Launch.TimeLimit < maxTimeLimit {
		t := time.NewTimer(time.Duration(job.Launch.TimeLimit) * time.Second)
		defer t.Stop()
		limit = t.C
	}
	var granted time.Duration // limit extensions for suspensions
	warn := warningTimer(&job.Launch)
	cancel := ctl.Cancel
	var kill <-chan time.Time
	var termWhenReady <-chan struct{}
	why := endNatural
	stop := func(w ending) {
		if why != endNatural {
			return
		}
		why = w
		termWhenReady = ready
		t := time.NewTimer(job.KillWait())
		kill = t.C
	}
	for {
		select {
		case w := <-done:
			return why, w.ps
		case <-termWhenReady:
			termWhenReady = nil
			_ = c.Signal(syscall.SIGTERM)
		case <-cancel:
			cancel = nil
			stop(endCancelled)
		case <-limit:
			limit = nil
			if wait, g := limitExtension(dir, granted); wait > 0 { // suspended time does not count
				granted, limit = g, time.After(wait)
				continue
			}
			stop(endTimeout)
		case <-warn:
			warn = nil
			sig := job.Launch.Signal
			n, err := SignalJob("/proc", dir, c.Pid(), syscall.Signal(sig.Signal), warningScope(sig))
			if err != nil || n == 0 {
				log.Printf("job %d: --signal %d reached %d processes (%s): %v", job.Launch.JobID, sig.Signal, n, warningScope(sig), err)
			}
		case <-kill:
			kill = nil
			_ = c.Signal(syscall.SIGKILL)
		}
	}
}

// exitStatus prefers corral-init's report; without one (corral-init was
// killed) it reads corral-init's own wait status.
func exitStatus(ps *os.ProcessState, report []byte) (code, sig int, msg string) {
	var rep initproto.Report
	if len(report) > 0 && json.Unmarshal(report, &rep) == nil {
		if rep.Error != "" {
			msg = "corral-init: " + rep.Error
		}
		return rep.ExitCode, rep.Signal, msg
	}
	if ps == nil {
		return 1, 0, "lost the job's process"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal()), ""
	}
	return ps.ExitCode(), 0, ""
}

// decide maps how the job ended to its state; the order matters.
func decide(why ending, r *Result) api.JobState {
	switch {
	case why == endCancelled:
		return api.StateCancelled
	case why == endTimeout:
		return api.StateTimeout
	case r.OOMKills > r.StepOOMKills:
		return api.StateOutOfMemory
	case r.ExitCode == 0 && r.Signal == 0:
		return api.StateCompleted
	}
	return api.StateFailed
}

// binds are the job's own mounts over the read-only host view (its /tmp
// is the container's tmpfs) but for those from the user's paths, its work
// directory, its home and its --mount requests (userFiles).
func binds(job *Job, script string) []container.Bind {
	bs := []container.Bind{{Source: job.InitPath, Dest: initproto.InitPath}}
	if job.Launch.Role != api.RoleExtern { // an extern node runs no script
		bs = append(bs, container.Bind{Source: script, Dest: initproto.ScriptPath})
	}
	return append(bs, gpuBinds(job)...) // gpu.go
}

func intGroups(gs []uint32) []int {
	out := make([]int, len(gs))
	for i, g := range gs {
		out[i] = int(g)
	}
	return out
}

func writeOwned(path string, data []byte, mode os.FileMode, id Identity) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(path, mode); err != nil { // umask
		return err
	}
	return os.Chown(path, int(id.UID), int(id.GID))
}

// setupStop is closed (c) when the job is cancelled or reaches its time
// limit while its container is being set up: runc's init bind-mounts the
// work directory, the home and the --mount sources, which can wait for
// as long as a file system does not answer (container.Spec.Stop).
type setupStop struct {
	c     chan struct{}
	state api.JobState // CANCELLED or TIMEOUT, once c is closed
}

// watchSetup starts watching for cancel and the time limit (counted from
// now, as openUserFiles does); end stops watching.
func watchSetup(job *Job, ctl Controls) (*setupStop, func()) {
	s := &setupStop{c: make(chan struct{})}
	done := make(chan struct{})
	var limit <-chan time.Time
	var t *time.Timer
	if tl := job.Launch.TimeLimit; tl > 0 && tl < maxTimeLimit {
		t = time.NewTimer(time.Duration(tl) * time.Second)
		limit = t.C
	}
	go func() {
		if t != nil {
			defer t.Stop()
		}
		select {
		case <-ctl.Cancel:
			s.state = api.StateCancelled
		case <-limit:
			s.state = api.StateTimeout
		case <-done:
			return
		}
		close(s.c)
	}()
	return s, func() { close(done) }
}

func (s *setupStop) result(err error) *Result {
	<-s.c // closed, since the container stopped for it
	what := "cancelled"
	if s.state == api.StateTimeout {
		what = "time limit reached"
	}
	return &Result{State: s.state, End: time.Now(),
		Message: fmt.Sprintf("%s while the job's container was being set up (a file system that does not answer?): %v", what, err)}
}
