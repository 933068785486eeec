package slurmfmt

import "testing"

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		secs                int64
		compact, clock, lim string
	}{
		{0, "0:00", "00:00:00", "UNLIMITED"},
		{5, "0:05", "00:00:05", "0:05"},
		{65, "1:05", "00:01:05", "1:05"},
		{3599, "59:59", "00:59:59", "59:59"},
		{3600, "1:00:00", "01:00:00", "1:00:00"},
		{3661, "1:01:01", "01:01:01", "1:01:01"},
		{86399, "23:59:59", "23:59:59", "23:59:59"},
		{86400, "1-00:00:00", "1-00:00:00", "1-00:00:00"},
		{11*86400 + 5*3600 + 7, "11-05:00:07", "11-05:00:07", "11-05:00:07"},
		{-1, "INVALID", "INVALID", "UNLIMITED"},
	} {
		if got := Compact(tc.secs); got != tc.compact {
			t.Errorf("Compact(%d) = %q, want %q", tc.secs, got, tc.compact)
		}
		if got := Clock(tc.secs); got != tc.clock {
			t.Errorf("Clock(%d) = %q, want %q", tc.secs, got, tc.clock)
		}
		if got := limit(tc.secs, Compact); got != tc.lim {
			t.Errorf("limit(%d) = %q, want %q", tc.secs, got, tc.lim)
		}
	}
}

func TestCPUTime(t *testing.T) {
	for _, tc := range []struct {
		usec int64
		want string
	}{
		{0, "00:00.000"},
		{1234567, "00:01.234"},
		{61_500_000, "01:01.500"},
		{3600_000_000, "01:00:00"},
		{90000_000_000, "1-01:00:00"},
		{-1, "INVALID"},
	} {
		if got := CPUTime(tc.usec); got != tc.want {
			t.Errorf("CPUTime(%d) = %q, want %q", tc.usec, got, tc.want)
		}
	}
}
