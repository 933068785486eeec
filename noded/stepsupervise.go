package noded

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// Files noded keeps in a step's directory besides the runner's.
const (
	runnerLogFile = "runner.log" // the runner's stdout and stderr
	// reportedFile marks a step whose end is queued, so a restarted noded
	// does not report it again.
	reportedFile = "reported"
)

// stepEndGrace is how long, beyond the kill wait, a job's end waits for
// its step runners to finish before they are killed outright.
const stepEndGrace = 5 * time.Second

// step is a step runner this noded supervises.
type step struct {
	job    uint64
	id     int
	jobDir string
	dir    string
	pid    int
	// proc is the runner when this noded started it; nil for one
	// reattached after a restart (signalled by pid, after checking that
	// the pid is still that runner).
	proc      *os.Process
	ctl       *os.File // the write end of its control pipe (nil when reattached)
	cancelled bool     // by ctld (scancel JOB.STEP): it ends CANCELLED
	// stopped: by its job's end; its state still comes from its tasks'
	// statuses (stepNodeState).
	stopped bool
	done    chan struct{} // closed once its end is queued and the runner gone
}

func (st *step) String() string { return fmt.Sprintf("step %d.%d", st.job, st.id) }

// superviseStep follows a runner this noded started to its end, which it
// reports once result.json is written (shim.EndedLine) or the runner is
// gone.
func (d *Daemon) superviseStep(j *job, st *step, cmd *exec.Cmd, status *os.File) {
	defer d.supervisors.Done()
	reported := false
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if sc.Text() == shim.EndedLine && !reported {
			if res, end, err := readStepResult(st.dir); err == nil {
				d.reportStep(st, res, end)
				reported = true
			}
		}
	}
	status.Close()
	werr := cmd.Wait()
	if !reported {
		res, end := d.stepOutcome(st, fmt.Sprintf("(%v)", werr))
		d.reportStep(st, res, end)
	}
	d.stepGone(j, st)
}

// reattachStep supervises a runner an earlier noded started: it is not
// this noded's child, so its end is polled for as a reattached shim's is.
func (d *Daemon) reattachStep(j *job, st *step) {
	defer d.supervisors.Done()
	for runnerPid(st) == st.pid {
		time.Sleep(reattachPoll)
	}
	res, end := d.stepOutcome(st, "(reattached after a noded restart)")
	d.reportStep(st, res, end)
	d.stepGone(j, st)
}

// stepOutcome is the result of a runner that is gone: its result.json,
// or FAILED if it wrote none.
func (d *Daemon) stepOutcome(st *step, why string) (*shim.StepResult, time.Time) {
	if res, end, err := readStepResult(st.dir); err == nil {
		return res, end
	}
	return &shim.StepResult{ExitCode: 1, Message: "the step's runner ended without a result " + why + logTail(filepath.Join(st.dir, runnerLogFile))}, time.Time{}
}

// readStepResult reads a runner's result.json and when it was written
// (the step's end).
func readStepResult(dir string) (*shim.StepResult, time.Time, error) {
	res, err := shim.ReadStepResult(dir)
	if err != nil {
		return nil, time.Time{}, err
	}
	var end time.Time
	if fi, err := os.Stat(filepath.Join(dir, shim.StepResultFile)); err == nil {
		end = fi.ModTime()
	}
	return res, end, nil
}

// reportStep queues the step's end durably (it is delivered at least
// once) and marks it reported.
func (d *Daemon) reportStep(st *step, res *shim.StepResult, end time.Time) {
	if end.IsZero() {
		end = time.Now()
	}
	d.mu.Lock()
	state := stepNodeState(res, st.cancelled, st.stopped)
	d.mu.Unlock()
	code, sig := nodeStatus(res)
	d.put(api.JobEvent{JobID: st.job, StepID: st.id, Node: d.cfg.Name, Kind: api.EventStepEnded, Time: end,
		State: state, ExitCode: code, Signal: sig, CPUTimeUsec: res.CPUTimeUsec,
		PeakMemBytes: res.PeakMemBytes, Message: res.Message})
	if err := os.WriteFile(filepath.Join(st.dir, reportedFile), nil, 0o600); err != nil {
		d.log.Printf("%s: %v", st, err)
	}
}

// stepNodeState is the state a node reports for its part of a step, as
// Slurm 22.05's accounting derives a step's from the status its nodes
// send, whoever stopped the tasks: an exit code is FAILED, a signal
// CANCELLED (a segfault, or SIGTERM from the job's end alike), 0
// COMPLETED, also for tasks that caught the job's end's SIGTERM and
// exited 0 (Slurm too: the status is all it sees). So the state does not
// depend on when the node learnt of its job's end, and no report waits
// for the container to go. Before that: a step with OOM kills is
// OUT_OF_MEMORY (Slurm's slurmstepd sends SIG_OOM then, whatever the
// statuses), a step ctld cancelled is CANCELLED (Slurm's scancel
// JOB.STEP SIGKILLs its tasks), and one its job's end stopped without a
// result of its tasks (its runner killed, or the job gone before they
// started) is CANCELLED too.
func stepNodeState(res *shim.StepResult, cancelled, stopped bool) api.JobState {
	code, sig := nodeStatus(res)
	switch {
	case res.OOMKills > 0:
		return api.StateOutOfMemory
	case cancelled, stopped && len(res.Tasks) == 0:
		return api.StateCancelled
	case sig != 0: // code is 128+sig then
		return api.StateCancelled
	case code != 0, res.Message != "":
		return api.StateFailed
	}
	return api.StateCompleted
}

// nodeStatus is the exit code and signal the node reports for a step, as
// Slurm's slurmstepd sends its node's: the highest wait status among the
// tasks and the runner's own result (an MPI abort's code), so that any
// exit code beats a signal. A task that exited 3 before its job's end
// killed the other (143, signal 15) makes the step FAILED 3:0 in ctld,
// as in Slurm, where the result's "highest exit code" would say 143.
func nodeStatus(res *shim.StepResult) (code, sig int) {
	raw := func(c, s int) int {
		if s != 0 {
			return s
		}
		return c << 8
	}
	code, sig = res.ExitCode, res.Signal
	for _, t := range res.Tasks {
		if raw(t.ExitCode, t.Signal) > raw(code, sig) {
			code, sig = t.ExitCode, t.Signal
		}
	}
	return code, sig
}

// stepGone forgets a step whose end is reported and whose runner is gone.
func (d *Daemon) stepGone(j *job, st *step) {
	d.mu.Lock()
	if j.steps[st.id] == st {
		delete(j.steps, st.id)
	}
	if st.ctl != nil {
		st.ctl.Close()
	}
	d.mu.Unlock()
	close(st.done)
}

// signalStep sends sig to a live runner. Called with d.mu held.
func (d *Daemon) signalStep(st *step, sig syscall.Signal) {
	var err error
	switch {
	case st.proc != nil:
		err = st.proc.Signal(sig)
	case runnerPid(st) == st.pid:
		err = syscall.Kill(st.pid, sig)
	}
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		d.log.Printf("%s: signalling its runner %d: %v", st, st.pid, err)
	}
}

// cancelStep asks one step's runner to kill its tasks at once
// (shim.StepKillSignal), as Slurm 22.05's scancel JOB.STEP SIGKILLs a
// step's tasks (checked on the loopback Slurm: a task that traps SIGTERM
// ends rc 9). A step of a running job that has no runner here is
// remembered, so a launch of it that is still on its way is refused;
// cancel is idempotent.
func (d *Daemon) cancelStep(jobID uint64, stepID int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j := d.jobs[jobID]
	if j == nil {
		return
	}
	st := j.steps[stepID]
	if st == nil {
		if j.cancelledSteps == nil {
			j.cancelledSteps = map[int]bool{}
		}
		j.cancelledSteps[stepID] = true
		return
	}
	st.cancelled = true
	d.log.Printf("%s: cancelling (runner %d)", st, st.pid)
	d.signalStep(st, shim.StepKillSignal)
}

// endSteps stops a job's step runners when the job ends and waits until
// their ends are queued: the job's container is gone, so their tasks are
// too, and the runners have only to report. No step starts in the job
// afterwards.
func (d *Daemon) endSteps(j *job) {
	d.mu.Lock()
	j.ending = true
	steps := make([]*step, 0, len(j.steps))
	for _, st := range j.steps {
		st.stopped = true
		d.signalStep(st, syscall.SIGTERM)
		steps = append(steps, st)
	}
	d.mu.Unlock()
	deadline := time.Now().Add(d.cfg.KillWait + stepEndGrace) // for all of them at once
	for _, st := range steps {
		d.awaitStep(st, time.Until(deadline))
	}
}

// awaitStep waits for a signalled runner's end to be queued, killing the
// runner if it takes longer than wait.
func (d *Daemon) awaitStep(st *step, wait time.Duration) {
	select {
	case <-st.done:
		return
	default:
	}
	t := time.NewTimer(max(wait, 0))
	defer t.Stop()
	select {
	case <-st.done:
		return
	case <-t.C:
	}
	d.log.Printf("%s: runner %d still there after SIGTERM; killing it", st, st.pid)
	d.mu.Lock()
	d.signalStep(st, syscall.SIGKILL)
	d.mu.Unlock()
	select {
	case <-st.done:
	case <-time.After(stepEndGrace):
		d.log.Printf("%s: runner %d does not die; its end will be reported when it does", st, st.pid)
	}
}

// nodeSteps lists live runners and steps whose end ctld has not yet
// acknowledged (GET /v1/steps).
func (d *Daemon) nodeSteps() []api.NodeStep {
	var out []api.NodeStep
	d.mu.Lock()
	for _, j := range d.jobs {
		for _, st := range j.steps {
			out = append(out, api.NodeStep{JobID: st.job, StepID: st.id})
		}
	}
	d.mu.Unlock()
	for _, ev := range d.q.Select(api.EventStepEnded) {
		s := api.NodeStep{JobID: ev.JobID, StepID: ev.StepID, Ended: true}
		if !slices.ContainsFunc(out, func(o api.NodeStep) bool { return o.JobID == s.JobID && o.StepID == s.StepID }) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b api.NodeStep) int {
		return cmp.Or(cmp.Compare(a.JobID, b.JobID), cmp.Compare(a.StepID, b.StepID))
	})
	return out
}

func (d *Daemon) handleSteps(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.nodeSteps())
}

func (d *Daemon) handleStepCancel(w http.ResponseWriter, r *http.Request) {
	var req api.StepCancelRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d.cancelStep(req.JobID, req.StepID)
	writeJSON(w, http.StatusOK, struct{}{})
}

// runnerPid returns the PID in the step's runner.pid if that process is
// alive and is the runner of this very step (its command line ends with
// the job directory and step id), else 0.
func runnerPid(st *step) int {
	return livePid(filepath.Join(st.dir, shim.RunnerPidFile), "\x00"+st.jobDir+"\x00"+strconv.Itoa(st.id)+"\x00")
}
