package jobspec

import "testing"

func TestExpandPattern(t *testing.T) {
	v := PatternVars{JobID: 42, Name: "train", User: "alice", Node: "dev1", NodeIndex: 0}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"corral-%j.out", "corral-42.out"},
		{DefaultOutput, "corral-42.out"},
		{"%x-%j-%u-%N-%n.log", "train-42-alice-dev1-0.log"},
		{"100%%", "100%"},
		{"%%j", "%j"},
		{"%%%j", "%42"},
		{"%5j", "00042"},
		{"%1j", "42"},
		{"%03n", "000"},
		{"%5x", "train"}, // width pads numbers only
		{"%q %A %", "%q %A %"},
		{"%", "%"},
		{"a%5", "a%5"},
		{"%123j", "%123j"}, // at most two width digits; the rest is kept as written
		{"/abs/%u/%j", "/abs/alice/42"},
		{"ünïcode-%j", "ünïcode-42"},
	} {
		if got := ExpandPattern(tc.in, v); got != tc.want {
			t.Errorf("ExpandPattern(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
