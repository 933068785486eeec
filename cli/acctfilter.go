package cli

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// sacct's and corral acct's state and time-window options.

// acctStatesAndWindow fills f's states and time window from option
// values, as corral acct and sacct take them ("" for no bound).
func acctStatesAndWindow(f *api.AcctFilter, states []string, start, end string, now time.Time) error {
	for _, s := range states {
		st, err := parseAcctState(s)
		if err != nil {
			return usageError{err}
		}
		f.States = append(f.States, st)
	}
	f.States = dedupeStates(f.States)
	for _, o := range []struct {
		name, value string
		dst         *time.Time
	}{{"starttime", start, &f.Start}, {"endtime", end, &f.End}} {
		if o.value != "" {
			t, err := parseAcctTime(o.value, now)
			if err != nil {
				return usageErrorf("invalid --%s %q: %v", o.name, o.value, err)
			}
			*o.dst = t
		}
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		return usageErrorf("--endtime %s is before --starttime %s", f.End.Format(time.DateTime), f.Start.Format(time.DateTime))
	}
	return nil
}

func parseAcctState(s string) (api.JobState, error) {
	if strings.EqualFold(s, string(api.StateRequeued)) || strings.EqualFold(s, api.StateRequeued.Short()) {
		return api.StateRequeued, nil
	}
	return api.ParseJobState(s)
}

// hasDate spots a --begin text that names its day: a date, or a word that
// fixes one. It is compiled on first use: only -S/-E need it, and every
// Slurm name's start-up would pay for it.
var hasDate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[/.]|\d{4}-|\d{4,}|now|today|tomorrow|uts`)
})

// parseAcctTime reads sacct's -S/-E times with sbatch --begin's parser.
// --begin looks ahead, sacct back: a time of day that --begin would put
// tomorrow is today's, and a date without a year that it would put next
// year is this year's.
func parseAcctTime(s string, now time.Time) (time.Time, error) {
	t, err := jobspec.ParseBegin(s, now)
	if err != nil {
		// ParseBegin's message names --begin; keep only the reason.
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return time.Time{}, fmt.Errorf("%s", msg)
	}
	switch {
	case !t.After(now):
	case !hasDate().MatchString(s): // a time of day: today's (or yesterday's)
		t = t.AddDate(0, 0, -1)
	case yearless().MatchString(s): // a day without a year: this year's
		t = t.AddDate(-1, 0, 0)
	}
	return t, nil
}

// yearless matches MMDD, MM/DD and MM.DD dates without a year; compiled
// on first use, like hasDate.
var yearless = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4}($|-\d{1,2}:)|\d{1,2}[/.]\d{1,2}($|[-T ]))`)
})
