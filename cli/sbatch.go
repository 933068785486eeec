package cli

import (
	"bufio"
	"os"

	"github.com/corral-hpc/corral/api"
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
			stderr: s.stderr, client: sbatchClient, testOnly: printTestOnly}
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
	return api.NewClient(api.ResolveSocket(socket))
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
