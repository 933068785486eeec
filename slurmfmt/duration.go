package slurmfmt

import (
	"fmt"

	"github.com/corral-hpc/corral/jobspec"
)

// Compact is a duration as squeue's TIME and TIME_LIMIT columns and
// sinfo print it: M:SS, H:MM:SS, or D-HH:MM:SS, days and hours only when
// needed; INVALID when negative.
func Compact(secs int64) string {
	if secs < 0 {
		return "INVALID"
	}
	return jobspec.FormatDuration(secs)
}

// Clock is a duration as sacct and scontrol print one: HH:MM:SS, with
// D- in front from a day on; INVALID when negative.
func Clock(secs int64) string {
	if secs < 0 {
		return "INVALID"
	}
	d, h, m, s := split(secs)
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// CPUTime is sacct's TotalCPU, UserCPU and SystemCPU: MM:SS.mmm under an
// hour, HH:MM:SS from an hour, D-HH:MM:SS from a day.
func CPUTime(usec int64) string {
	if usec < 0 {
		return "INVALID"
	}
	d, h, m, s := split(usec / 1e6)
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d.%03d", m, s, usec/1000%1000)
}

// limit prints a time limit in seconds with f; 0 is no limit.
func limit(secs int64, f func(int64) string) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	return f(secs)
}

// split is secs in days, hours, minutes and seconds.
func split(secs int64) (d, h, m, s int64) {
	return secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60
}
