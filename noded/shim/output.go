package shim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
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

// jobStdio are the job's open stdin, stdout and stderr (stderr may be
// stdout itself).
type jobStdio struct{ in, out, err *os.File }

func (s *jobStdio) Close() {
	for _, f := range []*os.File{s.in, s.out, s.err} {
		if f != nil {
			f.Close() // a second Close of a shared stdout is harmless
		}
	}
}

// openStdio checks, as the user, that the work directory can be entered,
// then opens the job's output files (truncating, or appending:
// appendOutput) and its input (/dev/null without one) as the user, under
// openStdioFile's rules; an extern node, which runs no script, gets
// /dev/null for all three. The errors are the job's fault and become its
// FAILED message.
func openStdio(id Identity, l *api.LaunchRequest, node string) (*jobStdio, error) {
	outPath, errPath := OutputPaths(l, node)
	inPath := InputPath(l, node)
	how := truncateFlags
	if appendOutput(l) {
		how = appendFlags
	}
	s := &jobStdio{}
	err := AsUser(id, func() error {
		// Stat through "<dir>/." needs search permission on every
		// component, the directory itself included, under the thread's
		// fsuid (access(2) would check the real uid, root).
		if _, err := os.Stat(l.WorkDir + "/."); err != nil {
			return fmt.Errorf("work directory %s: %w", l.WorkDir, describe(err))
		}
		var err error
		if l.Role == api.RoleExtern { // the batch node writes the job's files
			if s.in, err = os.Open(os.DevNull); err != nil {
				return err
			}
			s.out, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			s.err = s.out
			return err
		}
		if s.out, err = openJobFile("output", outPath, how, id.UID); err != nil {
			return err
		}
		s.err = s.out
		if errPath != outPath {
			if s.err, err = openJobFile("output", errPath, how, id.UID); err != nil {
				return err
			}
		}
		if inPath == "" {
			s.in, err = os.Open(os.DevNull)
			return err
		}
		s.in, err = openJobFile("input", inPath, inputFlags, id.UID)
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openJobFile is openStdioFile with the error the user sees.
func openJobFile(what, path string, how stdioFlags, uid uint32) (*os.File, error) {
	f, err := openStdioFile(path, how, uid)
	switch {
	case errors.Is(err, ErrRefused):
		return nil, fmt.Errorf("%s file %s: %w", what, path, err)
	case err != nil && how.output:
		return nil, fmt.Errorf("%s file %s cannot be created as the job's user: %w", what, path, err)
	case err != nil:
		return nil, fmt.Errorf("%s file %s cannot be opened as the job's user: %w", what, path, err)
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
