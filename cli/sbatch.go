package cli

import (
	"bufio"

	"github.com/corral-hpc/corral/slurmopt"
)

// sbatchCommand is `corral submit` under sbatch's name: the same parser
// (package jobspec reads sbatch's options itself) and the same submit,
// with sbatch's defaults: output in slurm-%j.out, the script read from
// standard input when none is named, and sbatch's words on errors.
func sbatchCommand() *slurmCommand {
	return &slurmCommand{run: func(s *slurmRun, r *slurmopt.Result) error {
		app := App()
		app.Metadata = map[string]any{personalityKey: "sbatch"}
		app.Reader = s.stdin
		app.Writer = flushingWriter{s.stdout} // "Submitted batch job N" before a --wait
		app.ErrWriter = s.stderr
		// --wait's exit status (the job's) comes back as an exitStatus,
		// which RunSlurm passes on.
		return app.RunContext(s.ctx, append([]string{"sbatch", "submit"}, r.Args...))
	}}
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
