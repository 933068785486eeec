package priority

import (
	"testing"
	"time"
)

// Slurm's reset periods are calendar periods in the cluster's zone:
// across daylight-saving changes (New York: 8 March and 1 November 2026)
// and month, quarter and leap-year ends.
func TestCalendarResets(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no time zone database to test a local zone with: %v", err)
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, ny)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		period   time.Duration
		now      string
		wantLast string
	}{
		{ResetDaily, "2026-03-08 12:00", "2026-03-08 00:00"},  // a 23-hour day
		{ResetDaily, "2026-11-01 23:30", "2026-11-01 00:00"},  // a 25-hour day
		{ResetDaily, "2026-11-02 00:00", "2026-11-02 00:00"},  // on the boundary
		{ResetWeekly, "2026-03-11 09:00", "2026-03-08 00:00"}, // Wednesday after the change: its Sunday
		{ResetWeekly, "2026-03-08 00:30", "2026-03-08 00:00"},
		{ResetWeekly, "2026-03-07 23:59", "2026-03-01 00:00"},
		{ResetMonthly, "2026-01-31 23:59", "2026-01-01 00:00"},
		{ResetMonthly, "2026-03-01 00:00", "2026-03-01 00:00"},
		{ResetMonthly, "2028-02-29 12:00", "2028-02-01 00:00"}, // leap day
		{ResetMonthly, "2026-11-15 12:00", "2026-11-01 00:00"}, // month began in summer time
		{ResetQuarterly, "2026-06-30 23:59", "2026-04-01 00:00"},
		{ResetQuarterly, "2026-12-31 12:00", "2026-10-01 00:00"},
		{ResetYearly, "2026-12-31 23:59", "2026-01-01 00:00"},
	} {
		d := Decay{ResetPeriod: tc.period, Location: ny}
		if got, want := d.lastReset(at(tc.now)), at(tc.wantLast); !got.Equal(want) {
			t.Errorf("%v at %s: last reset %v, want %v", tc.period, tc.now, got.In(ny), want)
		}
	}
	// Without a zone the calendar is UTC's; any other length counts from
	// the epoch.
	if got := (Decay{ResetPeriod: ResetMonthly}).lastReset(time.Date(2026, 5, 20, 3, 0, 0, 0, ny)); !got.Equal(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("UTC monthly reset %v", got)
	}
	if got := (Decay{ResetPeriod: 3 * time.Hour}).lastReset(time.Date(2026, 5, 20, 7, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 5, 20, 6, 0, 0, 0, time.UTC)) {
		t.Errorf("3 h reset %v", got)
	}
}

// A ledger with a monthly reset forgets usage on the first of the month,
// not 30 days after the epoch's multiple.
func TestMonthlyResetClearsOnTheFirst(t *testing.T) {
	l := NewLedger(Decay{HalfLife: -1, ResetPeriod: ResetMonthly})
	first := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	l.Charge("ann", "", 1, first.Add(-time.Hour), first.Add(time.Hour))
	if got := l.Usage("ann", "", first.Add(2*time.Hour)); got != 3600 {
		t.Fatalf("usage on 1 March %v, want only the hour since midnight", got)
	}
}
