package shim

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
	"golang.org/x/sys/unix"
)

// DefaultOutput is the output pattern when the job names none.
const DefaultOutput = "corral-%j.out"

// patternVars are the values a job's file patterns refer to; the patterns
// themselves are jobspec's, so the node expands exactly what the client
// documents (%j %x %u %N %n %A %a %r ...).
func patternVars(l *api.LaunchRequest, node string) jobspec.PatternVars {
	v := jobspec.PatternVars{JobID: l.JobID, Name: l.Name, User: l.User, Node: node, Restarts: l.Restarts}
	if l.Array != nil {
		v.ArrayJobID, v.ArrayTaskID = l.Array.JobID, l.Array.TaskID
	}
	return v
}

// expand fills in one of the job's file patterns.
func expand(pattern string, l *api.LaunchRequest, node string) string {
	return jobspec.ExpandPattern(pattern, patternVars(l, node))
}

// OutputPaths returns the absolute stdout and stderr paths of a job; they
// are equal when Error is empty or expands to the same file.
func OutputPaths(l *api.LaunchRequest, node string) (stdout, stderr string) {
	out := l.Output
	if out == "" {
		out = DefaultOutput
	}
	stdout = resolve(l.WorkDir, expand(out, l, node))
	stderr = stdout
	if l.Error != "" {
		stderr = resolve(l.WorkDir, expand(l.Error, l, node))
	}
	return stdout, stderr
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// InputPath is the absolute path of the job's stdin file, "" for none
// (/dev/null).
func InputPath(l *api.LaunchRequest, node string) string {
	if l.Input == "" {
		return ""
	}
	return resolve(l.WorkDir, expand(l.Input, l, node))
}

// appendOutput: --open-mode=append, or a requeued run that was not told
// to truncate (its earlier run's output is kept, as Slurm keeps it).
func appendOutput(l *api.LaunchRequest) bool {
	return l.OpenMode == "append" || l.Restarts > 0 && l.OpenMode != "truncate"
}

// openInput opens the job's --input file for reading as the user; nil
// without one.
func openInput(id Identity, l *api.LaunchRequest, node string) (*os.File, error) {
	path := InputPath(l, node)
	if path == "" {
		return nil, nil
	}
	var f *os.File
	err := AsUser(id, func() error {
		var err error
		f, err = os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("input file %s cannot be opened as the job's user: %w", path, describe(err))
		}
		return nil
	})
	return f, err
}

// openOutputs creates (truncating, or appending: appendOutput) the job's
// output files as the user and checks, also as the user, that the work
// directory can be entered. The errors are the job's fault and become its
// FAILED message.
func openOutputs(id Identity, l *api.LaunchRequest, node string) (stdout, stderr *os.File, err error) {
	outPath, errPath := OutputPaths(l, node)
	create := func(path string) (*os.File, error) { return createOutput(path, appendOutput(l)) }
	err = AsUser(id, func() error {
		// Stat through "<dir>/." needs search permission on every
		// component, the directory itself included, under the thread's
		// fsuid (access(2) would check the real uid, root).
		if _, err := os.Stat(l.WorkDir + "/."); err != nil {
			return fmt.Errorf("work directory %s: %w", l.WorkDir, describe(err))
		}
		var err error
		if stdout, err = create(outPath); err != nil {
			return err
		}
		if errPath == outPath {
			stderr = stdout
			return nil
		}
		if stderr, err = create(errPath); err != nil {
			stdout.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return stdout, stderr, nil
}

func createOutput(path string, appendTo bool) (*os.File, error) {
	mode := os.O_TRUNC
	if appendTo {
		mode = os.O_APPEND
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|mode|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output file %s cannot be created as the job's user: %w", path, describe(err))
	}
	return f, nil
}

// describe turns an *os.PathError into its bare errno text, since the
// caller already names the path.
func describe(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
