package api

import (
	"fmt"
	"strings"
)

// Bounds on what one user-plane request may carry. They are defined here,
// once, because both sides enforce them: the controller (the trust
// boundary) refuses what exceeds them, and the CLI checks or batches
// before it sends, so neither accepts what the other refuses.
const (
	// MaxScriptBytes bounds a batch script. Request bodies are at most
	// 4 MiB including the environment and JSON escaping, so a script must
	// stay well below that.
	MaxScriptBytes = 2 << 20
	// MaxFieldBytes bounds every other string in a request: a name, a
	// path, one environment entry, one argument, a map key or value.
	MaxFieldBytes = 64 << 10
	// MaxListEntries bounds every list in a request (environment,
	// arguments, mounts, gres, dependency conditions, array ranges...).
	MaxListEntries = 1 << 16
	// MaxRefsPerRequest bounds the job IDs and array tasks one cancel,
	// hold, release or requeue names; the CLI sends more in batches.
	// Filters (cancel --user, --state, --name) are expanded by the
	// controller and are not bounded by it.
	MaxRefsPerRequest = 10000
	// MaxListedErrors bounds the per-job refusals one answer lists; the
	// answer counts the rest (CancelResponse.ErrorCount).
	MaxListedErrors = 100
)

// ValidateScript says why script cannot be a batch script, or nil. name
// is how the error calls it ("script", "script job.sh"). The CLI checks a
// script file with it before sending, the controller every submit.
func ValidateScript(name, script string) error {
	switch {
	case len(script) > MaxScriptBytes:
		return fmt.Errorf("%s is larger than the limit of %d bytes", name, MaxScriptBytes)
	case strings.TrimSpace(script) == "":
		return fmt.Errorf("%s is empty", name)
	case strings.IndexByte(script, 0) >= 0:
		return fmt.Errorf("%s contains NUL bytes: it is not a text file", name)
	case strings.Contains(script, "\r\n"):
		return fmt.Errorf(`%s has DOS line breaks (\r\n): convert it with dos2unix`, name)
	}
	return nil
}

// Problems is every reason one request is refused, in the order they were
// found. Its text joins them with "; ", so a request with one problem reads
// exactly as that problem, and a client that shows errors on one line
// (the CLI) shows them all. The controller answers a refused submit with
// all of them at once (docs/api.md, "POST /v1/jobs").
type Problems []error

func (p Problems) Error() string {
	texts := make([]string, len(p))
	for i, e := range p {
		texts[i] = e.Error()
	}
	return strings.Join(texts, "; ")
}

// Unwrap gives errors.Is and errors.As every problem.
func (p Problems) Unwrap() []error { return p }

// Err is nil when there is no problem, else p.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}
