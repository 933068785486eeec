package jobspec

import (
	"strings"
	"testing"
	"time"
)

// testNow is the fixed "now" of the tests: a Saturday morning in a zone
// east of UTC, so that resolving in the wrong zone shows.
var testNow = time.Date(2026, time.March, 14, 9, 26, 53, 0, time.FixedZone("CET", 3600))

// at builds a time in testNow's zone.
func at(year int, month time.Month, day, hour, min, sec int) time.Time {
	return time.Date(year, month, day, hour, min, sec, 0, testNow.Location())
}

func TestParseBegin(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		// Times of day: today if still ahead by the minute, else tomorrow.
		{"16:00", at(2026, 3, 14, 16, 0, 0)},
		{"9:27", at(2026, 3, 14, 9, 27, 0)},
		{"09:26", at(2026, 3, 15, 9, 26, 0)}, // this minute has begun: tomorrow
		{"08:00:30", at(2026, 3, 15, 8, 0, 30)},
		{"4:30pm", at(2026, 3, 14, 16, 30, 0)},
		{"4:30 PM", at(2026, 3, 14, 16, 30, 0)},
		{"12:00am", at(2026, 3, 15, 0, 0, 0)},
		{"12:15pm", at(2026, 3, 14, 12, 15, 0)},
		{"11:59AM", at(2026, 3, 14, 11, 59, 0)},
		{"midnight", at(2026, 3, 15, 0, 0, 0)},
		{"noon", at(2026, 3, 14, 12, 0, 0)},
		{"elevenses", at(2026, 3, 14, 11, 0, 0)},
		{"fika", at(2026, 3, 14, 15, 0, 0)},
		{"teatime", at(2026, 3, 14, 16, 0, 0)},
		{"TeaTime", at(2026, 3, 14, 16, 0, 0)},
		// Days.
		{"today", at(2026, 3, 14, 0, 0, 0)},
		{"tomorrow", at(2026, 3, 15, 0, 0, 0)},
		{"Tomorrow", at(2026, 3, 15, 0, 0, 0)},
		{"teatime tomorrow", at(2026, 3, 15, 16, 0, 0)},
		{"tomorrow 10:00", at(2026, 3, 15, 10, 0, 0)},
		{"today 08:00", at(2026, 3, 14, 8, 0, 0)}, // in the past: eligible at once
		// Dates.
		{"2026-01-20T12:34:00", at(2026, 1, 20, 12, 34, 0)},
		{"2026-12-24T18:00", at(2026, 12, 24, 18, 0, 0)},
		{"2027-02-01", at(2027, 2, 1, 0, 0, 0)},
		{"2026-3-5", at(2026, 3, 5, 0, 0, 0)},
		{"122426", at(2026, 12, 24, 0, 0, 0)},
		{"1224", at(2026, 12, 24, 0, 0, 0)},
		{"0301", at(2027, 3, 1, 0, 0, 0)},  // already past this year: next year
		{"0314", at(2027, 3, 14, 0, 0, 0)}, // today's midnight has passed
		{"12/24", at(2026, 12, 24, 0, 0, 0)},
		{"12/24/27", at(2027, 12, 24, 0, 0, 0)},
		{"12.24.27", at(2027, 12, 24, 0, 0, 0)},
		{"3/14-10:00", at(2026, 3, 14, 10, 0, 0)},
		{"3/14-09:00", at(2027, 3, 14, 9, 0, 0)},
		{"02/29/28", at(2028, 2, 29, 0, 0, 0)},
		// Relative.
		{"now", testNow},
		{"now+60", testNow.Add(time.Minute)},
		{"now+1hour", testNow.Add(time.Hour)},
		{"now + 2 days", testNow.AddDate(0, 0, 2)},
		{"now+3weeks", testNow.AddDate(0, 0, 21)},
		{"NOW+90MINUTES", testNow.Add(90 * time.Minute)},
		{"now+1second", testNow.Add(time.Second)},
		{"now-5minutes", testNow.Add(-5 * time.Minute)},
		{"uts1800000000", time.Unix(1800000000, 0).In(testNow.Location())},
	} {
		got, err := ParseBegin(tc.in, testNow)
		if err != nil {
			t.Errorf("ParseBegin(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) || got.Location() != testNow.Location() {
			t.Errorf("ParseBegin(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseBeginErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no date or time"},
		{"  ", "no date or time"},
		{"soon", `unexpected "soon"`},
		{"noonish", `unexpected "ish"`},
		{"25:00", `bad time of day "25:00"`},
		{"12:60", `bad time of day "12:60"`},
		{"12:5", `bad time of day "12:5"`},
		{"12:00:61", `bad time of day "12:00:61"`},
		{"13:00pm", `bad time of day "13:00pm"`},
		{"2026-02-30", `bad date "2026-02-30"`},
		{"2026-13-01", `bad date "2026-13-01"`},
		{"1399", `bad date "1399"`},
		{"12/32", `bad date "12/32"`},
		{"02/29/27", `bad date "02/29/27"`},
		{"0229", "2027-02-29 is not a date"},
		{"tomorrow today", "more than one date"},
		{"noon teatime", "more than one time of day"},
		{"now tomorrow", "more than one date"},
		{"now+", "now+ needs a count, as in now+1hour"},
		{"now+x", "now+ needs a count, as in now+1hour"},
		{"now+1fortnight", `unexpected "fortnight"`},
		{"now+99999999weeks", "now+99999999weeks is more than 100 years away"},
		{"uts12", "uts needs a Unix time in seconds"},
		{strings.Repeat("1", 101), "too long"},
	} {
		_, err := ParseBegin(tc.in, testNow)
		prefix := "invalid --begin " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("ParseBegin(%q) error = %v\nwant prefix %s", tc.in, err, prefix)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseBegin(%q) error spans lines", tc.in)
		}
	}
}
