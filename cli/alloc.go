package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// An allocation's client (salloc, srun outside an allocation) submits an
// allocation job, waits until it is granted, keeps it alive while its
// work runs and releases it with the work's exit status. Its messages are
// Slurm's, prefixed with the command's name.

// allocPollFirst and allocPollMax bound how long the controller holds a
// look at a pending allocation (AllocationRequest.WaitReadyMs): short at
// first, growing to allocPollMax, within which a signal is noticed.
var allocPollFirst, allocPollMax = 5 * time.Millisecond, time.Second

// allocClient is one allocation being held.
type allocClient struct {
	prog   string // salloc or srun
	cl     *api.Client
	stderr io.Writer
	id     uint64
	alloc  api.Allocation // as last granted

	stop    context.CancelFunc
	renewed sync.WaitGroup
}

// allocSpec completes an allocation's spec from this process, as submit
// does a batch job's: the work directory, environment and umask.
func allocSpec(spec api.JobSpec) (api.JobSpec, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return spec, fmt.Errorf("cannot determine the current directory: %v", err)
	}
	switch {
	case spec.WorkDir == "":
		spec.WorkDir = cwd
	case !filepath.IsAbs(spec.WorkDir):
		spec.WorkDir = filepath.Join(cwd, spec.WorkDir)
	}
	spec.Env = os.Environ()
	if spec.Umask, err = submitUmask(); err != nil {
		return spec, err
	}
	sub := api.SubmitRequest{Spec: spec}
	if err := api.CheckSizes(&sub); err != nil {
		return spec, err
	}
	return spec, jobspec.ValidateRules(&spec)
}

// errRevoked is an allocation that ended before it was granted.
var errRevoked = errors.New("allocation revoked")

// allocate submits spec and waits until its allocation is ready for
// steps. As Slurm's commands, it says the allocation is pending only if
// the controller's first decision leaves it waiting: a job the
// scheduler has not looked at yet reads PENDING with reason None, and
// Slurm answers an allocation request after trying to start it, so a
// job that starts at once prints nothing (salloc: its grant). quiet
// leaves out salloc's "Pending job allocation" line (srun does not print
// it). A SIGINT or SIGTERM while it waits cancels the allocation.
func allocate(ctx context.Context, prog string, cl *api.Client, stderr io.Writer, spec api.JobSpec, quiet bool, immediate time.Duration) (*allocClient, error) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	id, err := cl.Submit(rctx, api.SubmitRequest{Spec: spec})
	cancel()
	if err != nil {
		return nil, err
	}
	a := &allocClient{prog: prog, cl: cl, stderr: stderr, id: id}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	pause, said := allocPollFirst, false
	var wait time.Duration // the first look answers at once: "queued" is said without delay
	deadline := time.Now().Add(immediate)
	for {
		got, err := a.renew(ctx, api.AllocationRequest{WaitReadyMs: int(wait / time.Millisecond)})
		switch {
		case err != nil:
			a.release(1)
			return nil, err
		case got.Ready:
			a.alloc = *got
			a.granted(said)
			a.keepAlive(ctx, got.RenewEvery())
			return a, nil
		case got.State.Terminal():
			why := ""
			if got.Message != "" {
				why = " (" + got.Message + ")"
			}
			fmt.Fprintf(stderr, "%s: Job allocation %d has been revoked.%s\n", prog, id, why)
			return nil, errRevoked
		case immediate > 0 && got.State == api.StatePending && got.Reason != "" && got.Reason != api.ReasonNone && !time.Now().Before(deadline):
			// -I: not granted in time. Slurm's words: busy nodes at once,
			// a timeout after a wait.
			why := "Requested nodes are busy"
			if said {
				why = "Connection timed out"
			}
			fmt.Fprintf(stderr, "%s: error: Unable to allocate resources: %s\n%[1]s: Job allocation %[3]d has been revoked.\n", prog, why, id)
			a.release(1)
			return nil, errRevoked
		case got.State == api.StatePending && !said && got.Reason != "" && got.Reason != api.ReasonNone:
			said = true
			if !quiet {
				fmt.Fprintf(stderr, "%s: Pending job allocation %d\n", prog, id)
			}
			fmt.Fprintf(stderr, "%s: job %d queued and waiting for resources\n", prog, id)
		}
		// The controller holds the next look until the grant (or the
		// wait's end): the pause is spent there, so a grant is seen at
		// once. A signal is seen between two looks.
		select {
		case <-sigs:
			fmt.Fprintf(stderr, "%s: Job allocation %d has been revoked.\n", prog, id)
			a.release(1)
			return nil, errRevoked
		case <-ctx.Done():
			a.release(1)
			return nil, ctx.Err()
		default:
		}
		wait, pause = pause, min(2*pause, allocPollMax)
	}
}

// granted says the allocation is granted, in the words of the command:
// after a wait, that it has been allocated resources; salloc, always,
// that it is granted.
func (a *allocClient) granted(waited bool) {
	if waited {
		fmt.Fprintf(a.stderr, "%s: job %d has been allocated resources\n", a.prog, a.id)
	}
	if a.prog == "salloc" {
		fmt.Fprintf(a.stderr, "salloc: Granted job allocation %d\n", a.id)
	}
}

func (a *allocClient) renew(ctx context.Context, req api.AllocationRequest) (*api.Allocation, error) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return a.cl.Allocation(rctx, a.id, req)
}

// keepAlive renews the allocation every interval until release; a
// renewal that fails is tried again at the next. When the allocation is
// revoked meanwhile (its time limit, a cancel) it says so once, as
// salloc does, and lets the work run on.
func (a *allocClient) keepAlive(ctx context.Context, every time.Duration) {
	ctx, a.stop = context.WithCancel(ctx)
	a.renewed.Add(1)
	go func() {
		defer a.renewed.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			got, err := a.renew(ctx, api.AllocationRequest{})
			if err == nil && got.State.Terminal() {
				fmt.Fprintf(a.stderr, "%s: Job allocation %d has been revoked.\n", a.prog, a.id)
				return
			}
		}
	}()
}

// release ends the allocation with the work's exit status. It uses a
// context of its own: the work's may be cancelled already.
func (a *allocClient) release(code int) {
	if a.stop != nil {
		a.stop()
		a.renewed.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if _, err := a.cl.Allocation(ctx, a.id, api.AllocationRequest{Release: true, ExitCode: code}); err != nil {
		fmt.Fprintf(a.stderr, "%s: error: releasing job allocation %d: %s\n", a.prog, a.id, oneLine(err.Error()))
	}
}
