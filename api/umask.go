package api

import (
	"fmt"
	"strconv"
)

// DefaultUmask is a job's umask when its spec carries none (a client
// older than JobSpec.Umask).
const DefaultUmask = 0o022

// ParseUmask reads JobSpec.Umask: one to four octal digits, at most 0777
// (the set-id and sticky bits are no part of a umask); "" is DefaultUmask.
func ParseUmask(s string) (uint32, error) {
	if s == "" {
		return DefaultUmask, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || len(s) > 4 || m > 0o777 {
		return 0, fmt.Errorf("umask %q is not an octal mode between 0000 and 0777", s)
	}
	return uint32(m), nil
}

// FormatUmask writes a umask as Slurm's SLURM_UMASK does: four octal
// digits, 0027.
func FormatUmask(m uint32) string { return fmt.Sprintf("%04o", m&0o777) }
