package noded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/internal/fsutil"
	"github.com/corral-hpc/corral/noded/shim"
)

// handleStepLaunch is srun's POST /v1/steps. srun holds no cluster key:
// the step credential in the body is the authority, checked before
// anything else happens, so a bad one starts nothing.
func (d *Daemon) handleStepLaunch(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var l api.StepLaunch
	if err := decode(r, &l); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := d.launchStep(&l, time.Now()); err != nil {
		if le, ok := errors.AsType[*launchError](err); ok {
			writeError(w, le.code, le.msg)
			return
		}
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// launchStep checks a step launch and starts its runner. A launch of a
// step this node already started (a retry) starts nothing and succeeds.
func (d *Daemon) launchStep(l *api.StepLaunch, now time.Time) error {
	c := &l.Credential
	me, err := api.VerifyCredential(c, d.cfg.Key, d.cfg.Name, now)
	if err != nil {
		return refuse(http.StatusForbidden, "step launch on node %s: %v", d.cfg.Name, err)
	}
	name := fmt.Sprintf("step %d.%s", c.JobID, api.StepName(c.StepID))
	if err := validateStepLaunch(l, me); err != nil {
		return refuse(http.StatusBadRequest, "%s: %v", name, err)
	}
	// The runner starts at once, also while the job's container is still
	// being set up (srun outside an allocation launches right after the
	// grant): it waits for the container itself (shim's stepwait.go), so
	// its start-up and its connection to srun overlap the container's.
	d.mu.Lock()
	defer d.mu.Unlock()
	j, le := d.stepTarget(c)
	if le != nil {
		return refuse(le.code, "%s: %s", name, le.msg)
	}
	if j.steps[c.StepID] != nil {
		return nil
	}
	if j.cancelledSteps[c.StepID] {
		return refuse(http.StatusConflict, "%s was cancelled", name)
	}
	stepDir := shim.StepDir(j.dir, c.StepID)
	if err := os.MkdirAll(filepath.Dir(stepDir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(stepDir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // started here before, and ended already
		}
		return err
	}
	sj := &shim.StepJob{Launch: *l, Node: d.cfg.Name, NodeID: slices.IndexFunc(c.Layout, func(n api.StepNode) bool { return n.Node == d.cfg.Name }),
		Ranks: me.Ranks}
	sj.LaunchNodeIP, _, _ = net.SplitHostPort(l.IOAddr)
	st := &step{job: c.JobID, id: c.StepID, jobDir: j.dir, dir: stepDir, done: make(chan struct{})}
	cmd, status, err := d.startRunner(st, sj)
	if err != nil {
		// Nothing runs: leave no trace, so a retry starts afresh.
		_ = os.RemoveAll(stepDir)
		return fmt.Errorf("%s: starting its runner: %w", name, err)
	}
	j.steps[st.id] = st
	d.supervisors.Add(1)
	go d.superviseStep(j, st, cmd, status)
	return nil
}

// validateStepLaunch rejects a launch no runner could carry out. me is
// this node's entry in the (verified) credential's layout.
func validateStepLaunch(l *api.StepLaunch, me api.StepNode) error {
	c := &l.Credential
	hasNUL := func(s string) bool { return strings.ContainsRune(s, 0) }
	switch {
	case c.JobID == 0:
		return errors.New("the credential names no job")
	case c.StepID < 0:
		return fmt.Errorf("step id %d is not an srun step", c.StepID)
	case len(l.Argv) == 0 || l.Argv[0] == "":
		return errors.New("no command to run")
	case slices.ContainsFunc(l.Argv, hasNUL) || slices.ContainsFunc(l.Env, hasNUL) || hasNUL(l.Cwd):
		return errors.New("command, environment and directory must not contain NUL")
	case l.Cwd != "" && !filepath.IsAbs(l.Cwd):
		return fmt.Errorf("working directory %q is not absolute", l.Cwd)
	case l.MPI != "" && l.MPI != api.MPIPMI2:
		return fmt.Errorf("--mpi=%s is not served here (only %s)", l.MPI, api.MPIPMI2)
	case l.IOToken == "":
		return errors.New("no I/O token")
	case len(me.Ranks) == 0:
		return errors.New("the credential gives this node no tasks")
	}
	if i := slices.IndexFunc(l.Env, func(kv string) bool { return !strings.Contains(kv, "=") }); i >= 0 {
		return fmt.Errorf("environment entry %q is not NAME=value", l.Env[i])
	}
	if host, port, err := net.SplitHostPort(l.IOAddr); err != nil || host == "" || port == "" {
		return fmt.Errorf("io_addr %q is not host:port", l.IOAddr)
	}
	for _, r := range me.Ranks {
		if r < 0 || r >= c.Tasks {
			return fmt.Errorf("rank %d outside the step's %d tasks", r, c.Tasks)
		}
	}
	return nil
}

// stepTarget finds the job a verified credential names and checks that
// a step may start in it here. Called with d.mu held.
func (d *Daemon) stepTarget(c *api.StepCredential) (*job, *launchError) {
	refuse := func(code int, format string, a ...any) *launchError {
		return &launchError{code: code, msg: fmt.Sprintf(format, a...)}
	}
	j := d.jobs[c.JobID]
	switch {
	case j == nil && (d.leaving[c.JobID] != nil || d.q.Has(c.JobID, api.EventEnded)):
		return nil, refuse(http.StatusConflict, "job %d has ended on node %s", c.JobID, d.cfg.Name)
	case j == nil:
		return nil, refuse(http.StatusNotFound, "job %d does not run on node %s", c.JobID, d.cfg.Name)
	case j.cancelled || j.ending:
		return nil, refuse(http.StatusConflict, "job %d is ending on node %s", c.JobID, d.cfg.Name)
	case !j.ownerKnown:
		return nil, refuse(http.StatusForbidden, "job %d's launch record on node %s is unreadable", c.JobID, d.cfg.Name)
	case j.uid != c.UID:
		return nil, refuse(http.StatusForbidden, "the credential is for uid %d; job %d runs as uid %d", c.UID, c.JobID, j.uid)
	}
	return j, nil
}

// waitJobStarted waits until the job's container runs (the shim said so,
// or its started file is there), at most wait; false if it did not, or
// if the job left.
func (d *Daemon) waitJobStarted(j *job, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Stat(filepath.Join(j.dir, shim.StartedFile)); err == nil {
			return true
		}
		d.mu.Lock()
		gone := d.jobs[j.id] != j
		d.mu.Unlock()
		if gone || time.Now().After(deadline) {
			return false
		}
		// The shim says the container runs a moment before it writes the
		// file: a signal or suspend that came with the job's start need
		// not wait for the next look. The look every 20 ms serves a
		// reattached job and notices one that left.
		select {
		case <-j.started:
			return true
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startRunner writes step.json and starts `<shim command> step <jobdir>
// <id>` detached like a job's shim, so that it outlives a noded restart.
// runner.pid is written here as well as by the runner, so a noded that
// dies right after the start still finds the runner when it recovers.
func (d *Daemon) startRunner(st *step, sj *shim.StepJob) (*exec.Cmd, *os.File, error) {
	if err := shim.WriteStepJob(st.dir, sj); err != nil {
		return nil, nil, err
	}
	argv := append(append([]string(nil), d.cfg.ShimCommand...), shim.StepArg, st.jobDir, strconv.Itoa(st.id))
	cmd, ctl, status, err := startDetached(argv, filepath.Join(st.dir, runnerLogFile))
	if err != nil {
		return nil, nil, err
	}
	st.pid, st.proc, st.ctl = cmd.Process.Pid, cmd.Process, ctl
	if err := fsutil.ReplaceFile(filepath.Join(st.dir, shim.RunnerPidFile), []byte(strconv.Itoa(st.pid)+"\n"), 0o600); err != nil {
		d.log.Printf("%s: %v", st, err)
	}
	return cmd, status, nil
}
