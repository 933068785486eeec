package jobspec

import "testing"

func TestParseTimeLimit(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"UNLIMITED", 0}, {"unlimited", 0}, {"Infinite", 0}, {"INFINITE", 0}, {"-1", 0},
		{"5", 5 * 60},                               // M
		{"90", 90 * 60},                             // minutes are not capped
		{"5:30", 5*60 + 30},                         // M:S
		{"1:02:03", 3600 + 2*60 + 3},                // H:M:S
		{"1:90:00", 3600 + 90*60},                   // fields are not capped
		{"2-0", 2 * 86400},                          // D-H
		{"2-3", 2*86400 + 3*3600},                   // D-H
		{"2-3:04", 2*86400 + 3*3600 + 4*60},         // D-H:M
		{"2-03:04:05", 2*86400 + 3*3600 + 4*60 + 5}, // D-H:M:S
		{"7-00:00:00", 7 * 86400},
		{"00:00:01", 1},
	}
	for _, tc := range good {
		got, err := ParseTimeLimit(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimeLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	bad := []string{"", "1:2:3:4", "1-2:3:4:5", "-5", "1-", "-", "1--2", "1-2-3", "a", "1h", "1:", ":1",
		"1::2", "1.5", " 5", "5 ", "+5", "1:-2", "-2", "--1", "unlimitedx", "999999999999999999-0", "1-999999999999999999"}
	for _, in := range bad {
		got, err := ParseTimeLimit(in)
		if err == nil {
			t.Errorf("ParseTimeLimit(%q) = %d, want an error", in, got)
			continue
		}
		want := `invalid time limit "` + in + `": use minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S (or UNLIMITED)`
		if err.Error() != want {
			t.Errorf("ParseTimeLimit(%q) error = %q, want %q", in, err, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{-5, "0:00"},
		{0, "0:00"},
		{7, "0:07"},
		{65, "1:05"},
		{59*60 + 59, "59:59"},
		{3600, "1:00:00"},
		{3600 + 2*60 + 3, "1:02:03"},
		{23*3600 + 59*60 + 59, "23:59:59"},
		{86400, "1-00:00:00"},
		{12*86400 + 3*3600 + 4*60 + 5, "12-03:04:05"},
	} {
		if got := FormatDuration(tc.in); got != tc.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in >= 0 {
			back, err := ParseTimeLimit(FormatDuration(tc.in))
			if err != nil || back != tc.in {
				t.Errorf("ParseTimeLimit(FormatDuration(%d)) = %d, %v", tc.in, back, err)
			}
		}
	}
}
