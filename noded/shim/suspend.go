package shim

import (
	"errors"
	"os"
	"time"
)

// A suspended job (scontrol suspend) is frozen by noded through its
// cgroup; the time it spends so does not count against its time limit,
// as in Slurm. noded records each suspension in the job directory, and
// the shim, when the limit's timer fires, gives the job that time more.

// SuspendFile (<jobdir>/suspend.json) holds the job's Suspension.
const SuspendFile = "suspend.json"

// Suspension is how long a job has been suspended.
type Suspension struct {
	// Since is when the current suspension began; nil while it runs.
	Since *time.Time `json:"since,omitempty"`
	// Total is the length of the suspensions that ended.
	Total time.Duration `json:"total_ns"`
}

// ReadSuspension reads the job's suspensions; none when there is no file.
func ReadSuspension(dir string) (Suspension, error) {
	var s Suspension
	err := readJSON(dir, SuspendFile, &s)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return s, err
}

// RecordSuspension notes that the job was suspended (frozen) or resumed
// at now; a repeated suspend or resume changes nothing.
func RecordSuspension(dir string, frozen bool, now time.Time) error {
	s, err := ReadSuspension(dir)
	if err != nil {
		return err
	}
	switch {
	case frozen && s.Since == nil:
		s.Since = &now
	case !frozen && s.Since != nil:
		s.Total += max(now.Sub(*s.Since), 0)
		s.Since = nil
	default:
		return nil
	}
	return writeJSON(dir, SuspendFile, s)
}

// limitExtension says, when the time limit's timer fires, how much longer
// to wait before the limit is reached: while the job is suspended, a
// second at a time; after suspensions, their length not granted yet
// (granted, which it returns updated). 0: the limit is reached.
func limitExtension(dir string, granted time.Duration) (wait, nowGranted time.Duration) {
	s, err := ReadSuspension(dir)
	switch {
	case err != nil:
		return 0, granted // unreadable: the limit as launched
	case s.Since != nil:
		return time.Second, granted
	case s.Total > granted:
		return s.Total - granted, s.Total
	}
	return 0, granted
}
