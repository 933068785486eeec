package jobspec

import (
	"fmt"
	"math"
	"strings"
)

// timeHint is the one-line explanation every bad time limit gets.
const timeHint = "use minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S (or UNLIMITED)"

// ParseTimeLimit reads a time limit in any of Slurm's spellings and returns
// seconds: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. "UNLIMITED", "infinite"
// (any case) and "-1" mean no limit and return 0, as does "0". Fields are
// not capped ("90" is 90 minutes, "1:90:00" is 2.5 hours), as in Slurm.
// Unlike Slurm, seconds are kept rather than rounded up to a minute.
func ParseTimeLimit(s string) (int64, error) {
	n, ok := parseTimeLimit(s)
	if !ok {
		return 0, fmt.Errorf("invalid time limit %q: %s", s, timeHint)
	}
	return n, nil
}

func parseTimeLimit(s string) (int64, bool) {
	if strings.EqualFold(s, "UNLIMITED") || strings.EqualFold(s, "infinite") || s == "-1" {
		return 0, true
	}
	if len(s) > 64 {
		return 0, false
	}
	days, clock, hasDays := strings.Cut(s, "-")
	if !hasDays {
		clock, days = days, ""
	}
	fields := strings.Split(clock, ":")
	if len(fields) > 3 {
		return 0, false
	}
	nums := make([]int64, len(fields))
	for i, f := range fields {
		n, ok := parseCount(f)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	// Which unit each field has depends on the count and on the day part.
	var units []int64
	switch {
	case hasDays && len(nums) == 1:
		units = []int64{3600}
	case hasDays && len(nums) == 2:
		units = []int64{3600, 60}
	case hasDays:
		units = []int64{3600, 60, 1}
	case len(nums) == 1:
		units = []int64{60}
	case len(nums) == 2:
		units = []int64{60, 1}
	default:
		units = []int64{3600, 60, 1}
	}
	var total int64
	if hasDays {
		d, ok := parseCount(days)
		if !ok {
			return 0, false
		}
		nums = append([]int64{d}, nums...)
		units = append([]int64{86400}, units...)
	}
	for i, n := range nums {
		if n > (math.MaxInt64-total)/units[i] {
			return 0, false
		}
		total += n * units[i]
	}
	return total, true
}

// parseCount reads a non-negative decimal integer of plain digits.
func parseCount(s string) (int64, bool) {
	if s == "" || len(s) > 18 || !allDigits(s) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// FormatDuration prints seconds as squeue prints a job's TIME: M:SS,
// H:MM:SS or D-HH:MM:SS. Negative values print as 0:00. ParseTimeLimit
// reads every value it prints back to the same number of seconds.
func FormatDuration(seconds int64) string {
	if seconds < 0 {
		seconds = 0
	}
	d, h, m, s := seconds/86400, seconds/3600%24, seconds/60%60, seconds%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
