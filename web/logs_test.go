package web

import "testing"

// A followed log never splits a UTF-8 character between two events.
func TestCompleteRunes(t *testing.T) {
	euro := "€" // three bytes
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a" + euro, 4}, {"a" + euro[:1], 1}, {"a" + euro[:2], 1},
		{"é", 2}, {"é"[:1], 0}, {"\xff", 1}, // invalid bytes are not held back for ever
	} {
		if got := completeRunes([]byte(c.in)); got != c.want {
			t.Errorf("completeRunes(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
