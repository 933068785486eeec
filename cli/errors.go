package cli

import (
	"fmt"
	"strings"
	"time"
)

// The errors every command returns, corral's and the Slurm names' alike,
// and the bound on each request.

// requestTimeout bounds every call to the controller so that a wedged
// controller makes the CLI fail instead of hang.
const requestTimeout = 60 * time.Second

// oneLine keeps an error on one line whatever produced it.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// usageError is bad usage or input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitStatus ends a command whose errors were already printed.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
