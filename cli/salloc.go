package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/slurmopt"
)

// sallocPersonality is salloc under its Slurm name.
func sallocPersonality() *slurmCommand {
	return &slurmCommand{run: func(s *slurmRun, r *slurmopt.Result) error {
		env := sallocEnv{stdin: s.stdin, stdout: flushingWriter{s.stdout}, stderr: s.stderr, client: s.client,
			lookup: os.LookupEnv}
		if code := runSalloc(s.ctx, env, r.Args); code != 0 {
			return exitStatus(code)
		}
		return nil
	}}
}

// sallocEnv is what salloc takes from its process: a test replaces it.
type sallocEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	client         func() *api.Client
	lookup         jobspec.LookupFunc // salloc's input variables (SALLOC_*)
}

// runSalloc is salloc: it returns the exit status, its command's.
func runSalloc(ctx context.Context, env sallocEnv, args []string) int {
	own, args, err := takeSallocOwn(args) // sallocopts.go
	if err != nil {
		fmt.Fprintf(env.stderr, "salloc: error: %s\nTry \"salloc --help\" for more information\n", oneLine(err.Error()))
		return 1
	}
	req, argv, err := jobspec.ParseAllocation(args, env.lookup, time.Now())
	switch {
	case err != nil:
		fmt.Fprintf(env.stderr, "salloc: error: %s\nTry \"salloc --help\" for more information\n", oneLine(err.Error()))
		return 1
	case req.Help:
		fmt.Fprintf(env.stdout, "usage: salloc [options] [CMD [ARGS...]]\n\n"+
			"Waits for an allocation, runs CMD (default: $SHELL, else /bin/sh) here with\n"+
			"the allocation's SLURM_* variables, so that srun inside it runs there, and\n"+
			"releases the allocation when CMD exits, with CMD's exit status.\n\n%s", jobspec.OptionsHelp())
		return 0
	case req.Version:
		fmt.Fprintf(env.stdout, "slurm %s (corral %s)\n", SlurmVersion, buildVersion())
		return 0
	}
	for _, w := range append(own.warnings, req.Warnings...) {
		fmt.Fprintf(env.stderr, "salloc: warning: %s\n", w)
	}
	if len(argv) == 0 {
		argv = []string{defaultShell()}
	}
	spec, err := allocSpec(req.Spec)
	if err != nil {
		fmt.Fprintf(env.stderr, "salloc: error: %s\n", oneLine(err.Error()))
		return 1
	}
	a, err := allocate(ctx, "salloc", env.client(), env.stderr, spec, false, own.immediate)
	if errors.Is(err, errRevoked) {
		return 1
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "salloc: error: Job submit/allocate failed: %s\n", oneLine(err.Error()))
		return 1
	}
	code := runAllocCommand(env, argv, allocEnviron(os.Environ(), &spec, &a.alloc))
	fmt.Fprintf(env.stderr, "salloc: Relinquishing job allocation %d\n", a.id)
	a.release(code)
	return code
}

// defaultShell is salloc's command when none is given.
func defaultShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		return sh
	}
	return "/bin/sh"
}

// runAllocCommand runs salloc's command here and returns its exit status
// (128+signal for a signalled one). Terminal signals reach it from the
// terminal itself; salloc only outlives them, and passes SIGTERM and
// SIGHUP on.
func runAllocCommand(env sallocEnv, argv []string, environ []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = env.stdin, env.stdout, env.stderr, environ
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(env.stderr, "salloc: error: %s: %v\n", argv[0], unwrapExecError(err))
		return 127
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
					cmd.Process.Signal(sig)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	reclaimTerminal(env.stdin)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func unwrapExecError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// allocEnviron is the command's environment: salloc's own, with the
// allocation's SLURM_* variables, so that srun inside runs in it.
func allocEnviron(base []string, spec *api.JobSpec, a *api.Allocation) []string {
	nodes := strconv.Itoa(len(a.Nodes))
	list := hostlist.Compress(a.Nodes)
	set := map[string]string{
		"SLURM_JOB_ID": strconv.FormatUint(a.JobID, 10), "SLURM_JOBID": strconv.FormatUint(a.JobID, 10),
		"SLURM_JOB_NODELIST": list, "SLURM_NODELIST": list,
		"SLURM_JOB_NUM_NODES": nodes, "SLURM_NNODES": nodes,
		"SLURM_JOB_NAME":          spec.Name,
		"SLURM_JOB_CPUS_PER_NODE": cpusPerNode(a.CPUs, len(a.Nodes)),
		"SLURM_SUBMIT_DIR":        spec.WorkDir,
	}
	if h, err := os.Hostname(); err == nil {
		set["SLURM_SUBMIT_HOST"] = h
	}
	tasks := jobspec.TasksPerNode(spec.Ntasks, spec.NtasksPerNode, len(a.Nodes))
	set["SLURM_TASKS_PER_NODE"] = hostlist.CompressCounts(tasks)
	if spec.Ntasks > 0 || spec.NtasksPerNode > 0 {
		n := 0
		for _, t := range tasks {
			n += t
		}
		set["SLURM_NTASKS"], set["SLURM_NPROCS"] = strconv.Itoa(n), strconv.Itoa(n)
	}
	if spec.NtasksPerNode > 0 {
		set["SLURM_NTASKS_PER_NODE"] = strconv.Itoa(spec.NtasksPerNode)
	}
	if a.Partition != "" {
		set["SLURM_JOB_PARTITION"] = a.Partition
	}
	if a.ClusterName != "" {
		set["SLURM_CLUSTER_NAME"] = a.ClusterName
	}
	if spec.CPUsPerTask > 0 {
		set["SLURM_CPUS_PER_TASK"] = strconv.Itoa(spec.CPUsPerTask)
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// cpusPerNode is SLURM_JOB_CPUS_PER_NODE: "4(x2)" for 4 CPUs on each of 2
// nodes.
func cpusPerNode(cpus, nodes int) string {
	if nodes <= 1 {
		return strconv.Itoa(cpus)
	}
	return fmt.Sprintf("%d(x%d)", cpus, nodes)
}

// reclaimTerminal makes salloc's process group the terminal's foreground
// again: an interactive shell takes the foreground for a group of its
// own and may leave it there when it exits.
func reclaimTerminal(in io.Reader) {
	f, ok := in.(*os.File)
	if !ok {
		return
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return // not a terminal
	}
	signal.Ignore(syscall.SIGTTOU) // a background group may not set it otherwise
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()) // best effort: the terminal may be gone
}
