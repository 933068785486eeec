package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
	"github.com/corral-hpc/corral/slurmfmt"
	"github.com/corral-hpc/corral/slurmopt"
)

// sbatchCommand is `corral submit` under sbatch's name: the same parser
// (package jobspec reads sbatch's options itself) and the same submit,
// with sbatch's defaults: output in slurm-%j.out, the script read from
// standard input when none is named, and sbatch's words on errors.
func sbatchCommand() *slurmCommand {
	return &slurmCommand{run: func(s *slurmRun, r *slurmopt.Result) error {
		sub := &submitter{ctx: s.ctx, prog: "sbatch", sbatch: true, stdin: s.stdin,
			stdout: flushingWriter{s.stdout}, // "Submitted batch job N" before a --wait
			stderr: s.stderr, client: sbatchClient, testOnly: sbatchTestOnly}
		// --wait's exit status (the job's) comes back as an exitStatus,
		// which RunSlurm passes on.
		return sub.submit(r.Args)
	}}
}

// sbatchClient is the controller as corral submit finds it: the job's
// --socket, else $CORRAL_CTLD over TCP, else $CORRAL_SOCKET or the
// default socket.
func sbatchClient(socket string) *api.Client {
	if base := os.Getenv(api.CtldEnv); socket == "" && base != "" {
		return remoteClientWith(base, envCAPath())
	}
	return api.NewOneShotClient(api.ResolveSocket(socket))
}

// sbatchTestOnly prints sbatch --test-only's answer as Slurm's sbatch
// does, on standard error: "sbatch: Job N to start at TIME using C
// processors on nodes LIST in partition P". N is the ID the job would get
// (0 from a controller that does not say); TIME is Unknown when the
// planner cannot say when it would start.
func sbatchTestOnly(_, stderr io.Writer, resp *api.TestSubmitResponse) error {
	j := &resp.Job
	start := "Unknown"
	if resp.Start != nil {
		start = resp.Start.Local().Format(slurmfmt.TimeLayout)
	}
	nodes := hostlist.Compress(resp.Nodes)
	if nodes == "" {
		nodes = "(null)"
	}
	_, err := fmt.Fprintf(stderr, "sbatch: Job %d to start at %s using %d processors on nodes %s in partition %s\n",
		resp.JobID, start, j.CPUs*max(j.NodeCount, 1), nodes, j.Partition)
	return err
}

// flushingWriter writes through a buffered writer at once.
type flushingWriter struct{ w *bufio.Writer }

func (f flushingWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}
