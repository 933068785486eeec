package shim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"golang.org/x/sys/unix"
)

// DefaultOutput is the output pattern when the job names none.
const DefaultOutput = "corral-%j.out"

// ExpandPattern fills in an output pattern: %j job ID, %x job name, %u
// user, %N node name, %n node index (0), %% a percent sign. Other %
// sequences stay as they are.
func ExpandPattern(pattern string, l *api.LaunchRequest, node string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 == len(pattern) {
			b.WriteByte(c)
			continue
		}
		i++
		switch pattern[i] {
		case 'j':
			b.WriteString(strconv.FormatUint(l.JobID, 10))
		case 'x':
			b.WriteString(l.Name)
		case 'u':
			b.WriteString(l.User)
		case 'N':
			b.WriteString(node)
		case 'n':
			b.WriteByte('0')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(pattern[i])
		}
	}
	return b.String()
}

// OutputPaths returns the absolute stdout and stderr paths of a job; they
// are equal when Error is empty or expands to the same file.
func OutputPaths(l *api.LaunchRequest, node string) (stdout, stderr string) {
	out := l.Output
	if out == "" {
		out = DefaultOutput
	}
	stdout = resolve(l.WorkDir, ExpandPattern(out, l, node))
	stderr = stdout
	if l.Error != "" {
		stderr = resolve(l.WorkDir, ExpandPattern(l.Error, l, node))
	}
	return stdout, stderr
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// openOutputs creates (truncating) the job's output files as the user and
// checks, also as the user, that the work directory can be entered. The
// errors are the job's fault and become its FAILED message.
func openOutputs(id Identity, l *api.LaunchRequest, node string) (stdout, stderr *os.File, err error) {
	outPath, errPath := OutputPaths(l, node)
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

func create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_CLOEXEC, 0o644)
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
