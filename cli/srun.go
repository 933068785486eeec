package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// srunEnv is what srun takes from its process: a test replaces it.
type srunEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
	client         func() *api.Client
}

// runSrun is srun: it returns the exit status. Its messages are Slurm's
// ("srun: error: ...") because scripts and launchers read them.
func runSrun(ctx context.Context, env srunEnv, args []string) int {
	cfg, err := parseSrun(args, env.getenv)
	var usage errSrunUsage
	switch {
	case errors.As(err, &usage):
		fmt.Fprintf(env.stderr, "srun: %s\nTry \"srun --help\" for more information\n", usage.msg)
		return 1
	case err != nil:
		fmt.Fprintf(env.stderr, "srun: error: %v\n", err)
		return 1
	case cfg.version:
		// MPI launchers run srun --version to learn that they may
		// bootstrap through it (docs/steps.md).
		fmt.Fprintf(env.stdout, "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		return 0
	case cfg.help:
		io.WriteString(env.stdout, srunUsage)
		return 0
	case cfg.mpiList:
		fmt.Fprintf(env.stdout, "MPI plugin types are...\n\t%s\n", strings.Join(srunMPITypes, "\n\t"))
		return 0
	}
	jobID := cfg.jobID
	if jobID == 0 {
		jobID, err = allocationJobID(env.getenv)
		if err != nil {
			fmt.Fprintf(env.stderr, "srun: error: %v\n", err)
			return 1
		}
	}
	if jobID == 0 {
		return runSrunAllocation(ctx, env, cfg) // srunalloc.go
	}
	if cfg.exclusive != "" && !cfg.req.Exact {
		fmt.Fprintf(env.stderr, "srun: error: %s is for allocations; a step takes --exclusive alone\n", cfg.exclusive)
		return 1
	}
	for _, o := range cfg.allocOnly {
		cfg.warnings = append(cfg.warnings, fmt.Sprintf("--%s is ignored inside an allocation", o))
	}
	return runStep(ctx, env, cfg, jobID)
}

// runStep runs cfg's step in job jobID and returns srun's exit status.
func runStep(ctx context.Context, env srunEnv, cfg *srunConfig, jobID uint64) int {
	informed := env // where srun's notices go: nowhere with -Q, as Slurm's
	if cfg.quiet {
		informed.stderr = io.Discard
	}
	for _, w := range cfg.warnings {
		fmt.Fprintf(informed.stderr, "srun: warning: %s\n", w)
	}
	for _, n := range cfg.notes {
		fmt.Fprintf(informed.stderr, "srun: %s\n", n)
	}
	grant, err := createStep(ctx, informed, jobID, cfg.req, cfg.immediate)
	var cancelled errStepCancelled
	if errors.As(err, &cancelled) {
		fmt.Fprintf(env.stderr, "srun: %v\n", err)
		return 1
	}
	if err != nil {
		msg := oneLine(err.Error())
		if !strings.HasPrefix(msg, "Unable to create step") { // ctld words its refusals so already
			msg = fmt.Sprintf("Unable to create step for job %d: %s", jobID, msg)
		}
		fmt.Fprintf(env.stderr, "srun: error: %s\n", msg)
		return 1
	}
	if len(grant.Layout) == 0 {
		fmt.Fprintf(env.stderr, "srun: error: step %d.%d was granted no nodes\n", jobID, grant.Step.StepID)
		return 1
	}
	if cfg.verbose > 0 {
		fmt.Fprintf(env.stderr, "srun: jobid %d: nodes(%d):`%s', tasks %d\n", jobID, len(grant.Layout), hostlist.Compress(layoutNodes(grant.Layout)), grant.Credential.Tasks)
		fmt.Fprintf(env.stderr, "srun: launching StepId=%d.%d\n", jobID, grant.Step.StepID)
	}
	s, err := newStepSession(cfg, env, grant)
	if err != nil {
		fmt.Fprintf(env.stderr, "srun: error: StepId=%d.%d: %v\n", jobID, grant.Step.StepID, err)
		return 1
	}
	return s.run(ctx)
}

// srunRetryFirst is the first pause before asking again for a step whose
// nodes are busy; it doubles up to srunRetryMax. srun says that it waits
// only once it has waited srunBusyNotice: the usual busy nodes are those
// of the script's previous srun, whose end reaches ctld a moment after
// that srun returned.
var srunRetryFirst, srunRetryMax, srunBusyNotice = 50 * time.Millisecond, 5 * time.Second, time.Second

// errStepCancelled is srun interrupted while it waited for busy nodes.
type errStepCancelled struct{ sig syscall.Signal }

func (e errStepCancelled) Error() string {
	return fmt.Sprintf("Cancelled pending job step with signal %d", int(e.sig))
}

// createStep asks ctld for the step. While running steps hold the nodes
// it needs (409 "Requested nodes are busy") it asks again, as Slurm's
// srun does, until they are free or a signal ends the wait.
func createStep(ctx context.Context, env srunEnv, jobID uint64, req api.StepRequest, immediate time.Duration) (*api.StepGrant, error) {
	var sigs chan os.Signal
	var since time.Time // the first busy answer
	said := false
	pause := srunRetryFirst
	for {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		grant, err := env.client().CreateStep(rctx, jobID, req)
		cancel()
		var se *api.StatusError
		if err == nil || !errors.As(err, &se) || se.Code != http.StatusConflict || !strings.Contains(se.Message, "Requested nodes are busy") {
			if err == nil && said {
				fmt.Fprintf(env.stderr, "srun: Step created for StepId=%d.%d\n", jobID, grant.Step.StepID)
			}
			return grant, err
		}
		if immediate > 0 && (sigs != nil && time.Since(since) >= immediate || immediate == atFirstLook) {
			return nil, err // -I: the nodes are busy, and srun does not wait
		}
		if sigs == nil {
			since = time.Now()
			sigs = make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
		}
		if !said && time.Since(since) >= srunBusyNotice {
			said = true
			fmt.Fprintf(env.stderr, "srun: Job %d step creation temporarily disabled, retrying (Requested nodes are busy)\n", jobID)
		}
		select {
		case sig := <-sigs:
			return nil, errStepCancelled{sig.(syscall.Signal)}
		case <-time.After(pause):
		}
		pause = min(2*pause, srunRetryMax)
	}
}

// allocationJobID is the job srun runs in: $SLURM_JOB_ID (or the older
// $SLURM_JOBID), as Slurm's srun reads it; 0 outside an allocation.
func allocationJobID(getenv func(string) string) (uint64, error) {
	for _, name := range []string{"SLURM_JOB_ID", "SLURM_JOBID"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil || id == 0 {
			return 0, fmt.Errorf("$%s=%q is not a job ID", name, v)
		}
		return id, nil
	}
	return 0, nil // outside an allocation
}

func layoutNodes(layout []api.StepNode) []string {
	names := make([]string, len(layout))
	for i, n := range layout {
		names[i] = n.Node
	}
	return names
}

// masterPort is MASTER_PORT for the step. When srun runs on the step's
// first node it asks the kernel for a free port there. Otherwise srun
// cannot probe that host, so the port is derived from the job and step
// IDs, in 10000-31999: below Linux's ephemeral range (32768-60999), so no
// outgoing connection holds it, and different for consecutive steps.
func masterPort(jobID uint64, stepID int, firstNode, localNode string) int {
	if firstNode == localNode {
		if l, err := net.Listen("tcp", ":0"); err == nil {
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			return port
		}
	}
	return 10000 + int((jobID*64+uint64(stepID))%22000)
}

// localNodeName is the node srun runs on: $SLURMD_NODENAME inside a job,
// else the host name.
func localNodeName(getenv func(string) string) string {
	if n := getenv("SLURMD_NODENAME"); n != "" {
		return n
	}
	h, _ := os.Hostname()
	return h
}

// signalText is a signal's name as strsignal words it ("killed").
func signalText(sig int) string {
	return syscall.Signal(sig).String()
}
