package noded

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// job is a job this noded supervises.
type job struct {
	id    uint64
	dir   string
	slots []int
	ctl   *os.File // write end of the shim's control pipe
	// pid is the shim of a job reattached after a noded restart (ctl is
	// nil then: the pipe died with the earlier noded); 0 otherwise.
	pid       int
	cancelled bool
	gpu       *gpuClaim // its MIG instances and MPS GPU (gpus.go)
	// uid is the job's user, which a step credential must name; unknown
	// (ownerKnown false) for a reattached job whose launch.json is
	// unreadable, which then takes no steps.
	uid        uint32
	ownerKnown bool
	// start names the run (api.LaunchRequest.Start); zero when unknown.
	start  time.Time
	steps  map[int]*step // live step runners, by step ID
	ending bool          // its end is being reported: no new steps
	// cancelledSteps are steps ctld cancelled before they started here: a
	// launch still on its way must not start them afterwards.
	cancelledSteps map[int]bool
	// sock is the job's controller socket (jobsock.go); nil for a
	// reattached job launched without one.
	sock *jobSocket
	// started is closed when this noded's shim says the container runs,
	// waking step launches that arrived first; nil for a reattached job.
	started chan struct{}
}

// launchError is a launch noded refuses, with its HTTP status and, for a
// refusal that is the job's own fault, api.KindJobRefused.
type launchError struct {
	code int
	kind api.ErrorKind
	msg  string
}

func (e *launchError) Error() string { return e.msg }

// refuse is a refusal that is the node's fault (busy cores, leftovers, a
// broken device): ctld holds the node down and retries the job.
func refuse(code int, format string, a ...any) error {
	return &launchError{code: code, msg: fmt.Sprintf(format, a...)}
}

// refuseJob is a refusal caused by the job's request alone: ctld fails
// the job and keeps the node up, so no user's input can take a node out
// of service. Anything a user chooses must be refused this way.
func refuseJob(format string, a ...any) error {
	return &launchError{code: http.StatusBadRequest, kind: api.KindJobRefused, msg: fmt.Sprintf(format, a...)}
}

// validate rejects launch requests noded cannot run at all.
func (d *Daemon) validate(r *api.LaunchRequest) error {
	bad := func(format string, a ...any) error {
		return refuseJob("launch of job %d: "+format, append([]any{r.JobID}, a...)...)
	}
	switch {
	case r.JobID == 0:
		return refuse(http.StatusBadRequest, "launch: job_id must be positive")
	case r.CPUs > d.cfg.CPUs:
		// ctld placed it by the CPUs this node registered: the node's fault.
		return refuse(http.StatusBadRequest, "launch of job %d: asks for %d CPUs; node %s has %d", r.JobID, r.CPUs, d.cfg.Name, d.cfg.CPUs)
	case r.CPUs < 1:
		return bad("cpus must be at least 1")
	case r.MemBytes <= 0:
		return bad("mem_bytes must be positive")
	case r.ShmBytes < 0 || r.TimeLimit < 0:
		return bad("shm_bytes and time_limit_s must not be negative")
	case r.Script == "" && r.Role != api.RoleExtern: // an extern part (an allocation's) runs none
		return bad("the script is empty")
	case !filepath.IsAbs(r.WorkDir):
		return bad("work_dir %q is not an absolute path", r.WorkDir)
	case r.User == "":
		return bad("user is empty")
	case strings.ContainsRune(r.Output+r.Error+r.Input+r.WorkDir, 0):
		return bad("paths must not contain NUL")
	}
	return nil
}

// launch accepts a job and starts its shim. It returns once the shim is
// running; everything slow (container setup) happens in the shim.
func (d *Daemon) launch(r *api.LaunchRequest) (err error) {
	if err := d.validate(r); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	repeated := func() bool { return d.jobs[r.JobID] != nil || d.q.Has(r.JobID, api.EventEnded) }
	if repeated() {
		return nil // a repeated launch: already running or already ended
	}
	if end, ok := d.ended.repeatOf(r); ok {
		// The run ended and its end was acknowledged, yet the controller
		// launches it again: it cannot have seen that end. Say it again
		// (once: a failure here fails the launch, which the controller
		// retries).
		return d.q.Put(end)
	}
	if gone := d.leaving[r.JobID]; gone != nil {
		// A requeued job back before its last run's directory is deleted.
		d.mu.Unlock()
		select {
		case <-gone:
		case <-time.After(leavingWait):
		}
		d.mu.Lock()
		if repeated() {
			return nil
		}
	}
	slots, ok := d.cpus.alloc(r.CPUs)
	if !ok {
		return refuse(http.StatusConflict, "node %s has %d free CPUs; job %d needs %d", d.cfg.Name, d.cpus.free(), r.JobID, r.CPUs)
	}
	dir := filepath.Join(d.jobsDir, strconv.FormatUint(r.JobID, 10))
	defer func() {
		if err != nil {
			d.cpus.release(slots)
			_ = container.RemoveTree(dir)
		}
	}()
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return refuse(http.StatusConflict, "job %d has a leftover directory %s", r.JobID, dir)
		}
		return err
	}
	sj := &shim.Job{
		Launch: *r, Node: d.cfg.Name, Cpuset: d.cpus.cpuset(slots), Slots: slots,
		MaxPids: d.cfg.MaxPids, KillWaitMs: d.cfg.KillWait.Milliseconds(), InitPath: d.cfg.InitPath,
		RuncRoot: d.runcRoot, Hide: append([]string{d.cfg.StateDir}, d.cfg.Hide...),
		CtlSocket: true,
	}
	place, err := d.sparePlacement(sj) // spareprepared.go: the spare's cgroup when the job adopts its container
	if err != nil {
		return err
	}
	sj.CgroupPath = place.Path
	sock, err := d.openJobSocket(dir, place, r)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			sock.close()
		}
	}()
	if err := d.prepareEnvironment(r, sj); err != nil {
		return err
	}
	claim, err := d.claimGPUs(r, sj, dir) // gpus.go
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			d.gpus.release(r.JobID, claim)
		}
	}()
	if err := shim.WriteJob(dir, sj); err != nil {
		return err
	}
	j := &job{id: r.JobID, dir: dir, slots: slots, gpu: claim, uid: r.UID, ownerKnown: true, start: r.Start,
		steps: map[int]*step{}, sock: sock, started: make(chan struct{})}
	cmd, status, err := d.startShim(j, nextPreparation(sj))
	if err != nil {
		return fmt.Errorf("starting the shim of job %d: %w", r.JobID, err)
	}
	d.jobs[r.JobID] = j
	d.supervisors.Add(1)
	go d.supervise(j, cmd, status)
	return nil
}

// startShim hands the job to the spare shim, if there is one
// (spareshim.go), and starts the next spare, preparing next (nil:
// nothing; spareprepared.go), once the job runs; else it runs `<shim
// command> <dir>` (startDetached). d.mu is held.
func (d *Daemon) startShim(j *job, next *shim.Preparation) (*exec.Cmd, *os.File, error) {
	if cmd, ctl, status, ok := d.takeSpare(j.dir); ok {
		j.ctl = ctl
		go d.refillSpare(j, next)
		return cmd, status, nil
	}
	argv := append(append([]string(nil), d.cfg.ShimCommand...), j.dir)
	cmd, ctl, status, err := startDetached(argv, filepath.Join(j.dir, shim.LogFile))
	if err != nil {
		return nil, nil, err
	}
	j.ctl = ctl
	return cmd, status, nil
}

// startDetached starts a shim or a step runner in its own session, so
// that it outlives noded, with its output appended to logPath, the read
// end of a control pipe on fd 3 (shim.ControlFD: 'c' cancels; noded's
// end closing means noded is gone) and the write end of a status pipe on
// fd 4 (shim.StatusFD). It returns the control pipe's write end and the
// status pipe's read end.
// Extra files follow on fds 5 and up (a spare shim's job pipe).
func startDetached(argv []string, logPath string, extra ...*os.File) (cmd *exec.Cmd, ctl, status *os.File, err error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, nil, err
	}
	defer logf.Close()
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	defer ctlR.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlW.Close()
		return nil, nil, nil, err
	}
	defer stW.Close()
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = append([]*os.File{ctlR, stW}, extra...) // fds 3 and 4: shim.ControlFD, shim.StatusFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		ctlW.Close()
		stR.Close()
		return nil, nil, nil, err
	}
	return cmd, ctlW, stR, nil
}

// supervise follows a shim to its end and reports the job's start and
// end. The end is reported as soon as the shim says its result is written
// (shim.EndedLine), while it still deletes the job's scratch files; the
// job directory goes once the shim has exited.
func (d *Daemon) supervise(j *job, cmd *exec.Cmd, status *os.File) {
	defer d.supervisors.Done()
	reported, started := false, false
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		line := sc.Text()
		if at, ok := strings.CutPrefix(line, "started "); ok {
			t, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				t = time.Now()
			}
			d.put(api.JobEvent{JobID: j.id, Node: d.cfg.Name, Kind: api.EventStarted, Time: t})
			if j.started != nil && !started {
				close(j.started)
			}
			started = true
		}
		if rest, ok := strings.CutPrefix(line, "configuring "); ok {
			at, what, _ := strings.Cut(rest, " ")
			t, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				t = time.Now()
			}
			d.put(api.JobEvent{JobID: j.id, Node: d.cfg.Name, Kind: api.EventConfiguring, Time: t, Message: what})
		}
		if line == shim.EndedLine && !reported {
			if res, err := shim.ReadResult(j.dir); err == nil {
				d.report(j, res)
				reported = true
			}
		}
	}
	status.Close()
	werr := cmd.Wait()
	if !reported {
		res, err := shim.ReadResult(j.dir)
		if err != nil {
			// The shim died without a result: make sure its container is gone.
			if rerr := d.removeShimLeftovers(j.id, j.dir); rerr != nil {
				d.log.Printf("job %d: %v", j.id, rerr)
			}
			res = &shim.Result{State: api.StateFailed, ExitCode: 1, End: time.Now(),
				Message: fmt.Sprintf("the job's supervisor ended without a result (%v)%s", werr, logTail(filepath.Join(j.dir, shim.LogFile)))}
		}
		d.report(j, res)
	}
	d.removeDir(j)
}

// finish reports the end of a job whose shim is gone and removes its
// directory.
func (d *Daemon) finish(j *job, res *shim.Result) {
	d.report(j, res)
	d.removeDir(j)
}

// report ends the job's steps, frees its cores, queues its end durably
// and only then forgets it. Steps go first, so their ends reach ctld
// before the job's; cores before the end: ctld may launch the next job
// the moment it hears of it. The job stays listed (as running, then as an
// unacknowledged end) throughout, so no heartbeat reports it missing.
func (d *Daemon) report(j *job, res *shim.Result) {
	d.endSteps(j) // stepsupervise.go
	d.mu.Lock()
	d.cpus.release(j.slots)
	j.slots = nil
	claim := j.gpu
	j.gpu = nil
	d.mu.Unlock()
	d.gpus.release(j.id, claim) // MIG instances go before ctld hears of the end
	if j.sock != nil {
		j.sock.close() // nothing more in the job may reach ctld
	}
	end := endEvent(j.id, d.cfg.Name, res)
	d.put(end)
	d.mu.Lock()
	d.ended.add(j.start, end)
	delete(d.jobs, j.id)
	d.leaving[j.id] = make(chan struct{})
	if j.ctl != nil {
		j.ctl.Close()
	}
	d.mu.Unlock()
}

// leavingWait bounds how long a launch waits for the directory of the
// same job's previous run to be deleted; it stays below ctld's timeout
// for node calls, so a slow deletion ends in a clear refusal (the
// leftover directory), not a launch ctld gave up on.
const leavingWait = 5 * time.Second

// removeDir deletes the job's directory once its shim is gone.
func (d *Daemon) removeDir(j *job) {
	if err := container.RemoveTree(j.dir); err != nil {
		d.log.Printf("job %d: %v", j.id, err)
	}
	d.mu.Lock()
	if gone := d.leaving[j.id]; gone != nil {
		close(gone)
		delete(d.leaving, j.id)
	}
	d.mu.Unlock()
}

func endEvent(id uint64, node string, res *shim.Result) api.JobEvent {
	end := res.End
	if end.IsZero() {
		end = time.Now()
	}
	return api.JobEvent{
		JobID: id, Node: node, Kind: api.EventEnded, Time: end,
		State: res.State, ExitCode: res.ExitCode, Signal: res.Signal,
		PeakMemBytes: res.PeakMemBytes, CPUTimeUsec: res.CPUTimeUsec, Message: res.Message,
	}
}

// put queues an event, retrying until the disk takes it: an accepted job's
// end must never be lost.
func (d *Daemon) put(ev api.JobEvent) {
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		err := d.q.Put(ev)
		if err == nil {
			return
		}
		d.log.Printf("job %d: cannot queue its %s event (retrying): %v", ev.JobID, ev.Kind, err)
		time.Sleep(delay)
	}
}

// cancel asks a job's shim to stop it (SIGTERM, kill wait, SIGKILL). An
// unknown or already-ending job is left alone: cancel is idempotent.
func (d *Daemon) cancel(id uint64, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j := d.jobs[id]
	if j == nil || j.cancelled {
		return
	}
	d.thawForEnd(j)
	if j.ctl == nil {
		// A reattached shim: SIGTERM is its other cancel (shim.Main), sent
		// only while the PID is still that very shim.
		if j.pid > 0 && shimPid(j.dir) == j.pid {
			j.markCancelled()
			if err := syscall.Kill(j.pid, syscall.SIGTERM); err != nil {
				d.log.Printf("job %d: cancel (%s): %v", id, why, err)
				return
			}
			d.log.Printf("job %d: cancelling reattached shim %d (%s)", id, j.pid, why)
		}
		return
	}
	j.markCancelled()
	if _, err := j.ctl.Write([]byte{'c'}); err != nil {
		d.log.Printf("job %d: cancel (%s): %v", id, why, err)
		return
	}
	d.log.Printf("job %d: cancelling (%s)", id, why)
}

// markCancelled marks the job cancelled and its steps stopped by its
// end: their tasks die with the job's container (stepNodeState). Called
// with d.mu held.
func (j *job) markCancelled() {
	j.cancelled = true
	for _, st := range j.steps {
		st.stopped = true
	}
}

// runningJobs lists the jobs with a live shim, also one whose end is
// reported but whose shim still deletes its files: while it is listed,
// ctld does not relaunch a requeued job here (ctld/pipeline.go).
func (d *Daemon) runningJobs() []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	set := map[uint64]bool{}
	for id := range d.jobs {
		set[id] = true
	}
	for id := range d.leaving {
		set[id] = true
	}
	return sortedIDs(set)
}

// logTail returns the end of a log (a shim's, a step runner's) for a
// failure message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return ": " + strings.ReplaceAll(s, "\n", " | ")
}
